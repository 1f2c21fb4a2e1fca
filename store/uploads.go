package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/objstore"
)

// Uploads retention (docs/api.md section 3.4). An uploaded contacts file is
// needed only until a campaign has been created from it: the campaign copies
// every contact at create (section 9), and its report, redials and the dialer
// read the stored contacts, never the file; campaigns.source_id keeps the key
// as a record only. So the sweep deletes an upload
//
//   - once a visible campaign was created from it (at or after the upload,
//     give or take uploadClockSkew), unless another campaign is importing it
//     right now; or
//   - once it is older than the retention age (serve --upload-retention,
//     default 24 h) and no campaign is importing it: uploaded but never used.
//
// A campaign import in progress ('importing') protects its file whatever
// its age; a failed import leaves the file for a corrected retry, up to
// the retention age.

// uploadClockSkew is how far an object's LastModified (a remote S3 service's
// clock) may be ahead of this process's clock when deciding whether a
// campaign was created after the upload.
const uploadClockSkew = time.Minute

// UploadUse is how campaigns use one uploaded object key (their source_id).
type UploadUse struct {
	// LastCreated is when the newest visible campaign created from the key
	// was created; zero when there is none.
	LastCreated time.Time
	// Importing reports that a campaign is being imported from the key now.
	Importing bool
}

// UploadUses returns the use of every key some campaign (not a redial) was
// created from.
func (db *DB) UploadUses(ctx context.Context) (map[string]UploadUse, error) {
	rows, err := db.rq.UploadSourceUses(ctx)
	if err != nil {
		return nil, fmt.Errorf("upload uses: %w", err)
	}
	uses := make(map[string]UploadUse, len(rows))
	for _, r := range rows {
		u := UploadUse{Importing: r.Importing != 0}
		if r.LastCreatedAt != 0 {
			u.LastCreated = fromMS(r.LastCreatedAt)
		}
		uses[r.SourceID] = u
	}
	return uses, nil
}

// UploadObjects is what the sweep needs of the object store;
// *objstore.Store implements it for the bundled and remote stores alike
// (Delete is minio-go's RemoveObject in remote mode).
type UploadObjects interface {
	List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error)
	Delete(ctx context.Context, key string) error
}

// SweepResult counts what one sweep did.
type SweepResult struct {
	Used, Expired int   // uploads deleted because a campaign was created from them / because they were too old
	Bytes         int64 // their total size
	Kept          int   // uploads left in place
}

// SweepUploads deletes the uploads under prefix that no campaign needs any
// more (see the rule above), with db.Now as the clock and maxAge as the
// retention age of unused uploads (<= 0: unused uploads are kept for
// good). A failed delete is reported and the sweep goes on with the others.
func (db *DB) SweepUploads(ctx context.Context, objs UploadObjects, prefix string, maxAge time.Duration) (SweepResult, error) {
	var res SweepResult
	list, err := objs.List(ctx, prefix)
	if err != nil {
		return res, fmt.Errorf("sweep uploads: %w", err)
	}
	if len(list) == 0 {
		return res, nil
	}
	// Uses are read after the listing. A create that begins after this read
	// and names an upload this sweep deletes (one already used or expired)
	// may lose the race: it answers 422 "nothing was uploaded at this key",
	// as it would a moment later. An import that began before is seen as
	// importing and protects its file.
	uses, err := db.UploadUses(ctx)
	if err != nil {
		return res, fmt.Errorf("sweep uploads: %w", err)
	}
	now := db.Now()
	var errs []error
	for _, o := range list {
		use := uses[o.Key]
		var used, expired bool
		switch {
		case use.Importing:
		case !use.LastCreated.IsZero() && !use.LastCreated.Before(o.LastModified.Add(-uploadClockSkew)):
			used = true
		case maxAge > 0 && now.Sub(o.LastModified) >= maxAge:
			expired = true
		}
		if !used && !expired {
			res.Kept++
			continue
		}
		if err := objs.Delete(ctx, o.Key); err != nil {
			errs = append(errs, err)
			res.Kept++
			continue
		}
		res.Bytes += o.Size
		if used {
			res.Used++
		} else {
			res.Expired++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("sweep uploads: %w", err)
	}
	return res, nil
}
