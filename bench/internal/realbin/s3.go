package realbin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// S3 is a versitygw process serving a directory as a remote S3 store:
// with --database-url serve refuses its bundled store (API.md 16), and the
// nodes of a cluster share this one.
type S3 struct {
	// Addr is its host:port; AccessKey and SecretKey its root
	// credentials; Bucket the bucket serve uses (serve creates it).
	Addr, AccessKey, SecretKey, Bucket string

	cmd     *exec.Cmd
	logPath string
	exited  chan error
}

// FindVersitygw returns the versitygw binary as the project's tests find
// it: $OUTDIAL_VERSITYGW, else .cache/bin/versitygw at the root of the
// module the working directory is in (where .ci/versitygw.sh installs it),
// else versitygw on PATH.
func FindVersitygw() (string, error) {
	if p := os.Getenv("OUTDIAL_VERSITYGW"); p != "" {
		return p, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, ".cache", "bin", "versitygw")
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", errors.New("versitygw not found: run .ci/versitygw.sh (installs <repo>/.cache/bin/versitygw) or set OUTDIAL_VERSITYGW")
}

// StartS3 starts versitygw (FindVersitygw) on a free loopback port with
// fresh random credentials, storing objects under dir, its output in
// logPath, and waits until it answers (at most 30 s).
func StartS3(dir, logPath string) (*S3, error) {
	bin, err := FindVersitygw()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	s := &S3{Addr: FreeAddr(), AccessKey: "outdialbench", SecretKey: hex.EncodeToString(secret), Bucket: "outdial-bench",
		logPath: logPath, exited: make(chan error, 1)}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "--port", s.Addr, "posix", dir)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	track(s.cmd.Process)
	go func() {
		s.exited <- s.cmd.Wait()
		logFile.Close()
	}()
	// It answers an unsigned request (403) once it listens.
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-s.exited:
			b, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("versitygw exited: %v\n%s", err, Tail(b, 2000))
		default:
		}
		res, err := client.Get("http://" + s.Addr + "/")
		if err == nil {
			res.Body.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("versitygw not answering on %s within 30 s: %w", s.Addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ServeArgs are serve's flags for this store (API.md 3.2).
func (s *S3) ServeArgs() []string {
	return []string{"--s3-endpoint", s.Addr, "--s3-bucket", s.Bucket,
		"--s3-access-key", s.AccessKey, "--s3-secret-key", s.SecretKey, "--s3-insecure"}
}

// Pid is versitygw's process id.
func (s *S3) Pid() int { return s.cmd.Process.Pid }

// Stop kills versitygw and waits for it.
func (s *S3) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}
