package realbin

import "time"

// BackendCPU is a snapshot of the CPU time used by the PostgreSQL server
// processes connected to the benchmark's database (the pids
// pg_stat_activity lists for it, the benchmark's own connections
// excepted), read from /proc/<pid>/stat: the server must run on this
// machine. On SQLite the database work is inside serve's own CPU time; on
// PostgreSQL much of it is in these backends, so a figure per call names
// both. The server's shared processes (WAL writer, checkpointer,
// autovacuum) serve every database of the cluster and are not counted.
type BackendCPU map[int]time.Duration

// BackendCPU takes a snapshot; it is nil on SQLite and when the
// processes cannot be listed or read (a server on another machine).
func (d *Database) BackendCPU() BackendCPU {
	if d.sql == nil {
		return nil
	}
	rows, err := d.sql.Query(`SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name NOT LIKE 'outdial-bench%'
		AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	snap := BackendCPU{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil
		}
		if cpu, err := TryProcCPU(pid); err == nil {
			snap[pid] = cpu
		}
	}
	if rows.Err() != nil || len(snap) == 0 {
		return nil
	}
	return snap
}

// Since returns the CPU time the backends used between the snapshot
// before and b: each process's growth, the whole of a process that
// connected in between. A process that disconnected in between is lost
// (serve keeps its pool's connections open, so few do). It is 0 when
// either snapshot is nil.
func (b BackendCPU) Since(before BackendCPU) time.Duration {
	if b == nil || before == nil {
		return 0
	}
	var d time.Duration
	for pid, cpu := range b {
		d += cpu - before[pid]
	}
	return d
}

// Count is the number of backends in the snapshot.
func (b BackendCPU) Count() int { return len(b) }
