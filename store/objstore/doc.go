// Package objstore is Outdial's object storage: where uploaded contacts CSVs
// live between the client's upload and the campaign that reads them.
//
// It has two modes behind one [Store]:
//
//   - Bundled (the default): objects are files under a directory of the data
//     directory, and a small S3-compatible endpoint ([Handler]) mounted on the
//     service's own listener under [PathPrefix] accepts uploads. It speaks
//     path-style S3 for the single bucket [BundledBucket], verifies AWS
//     Signature Version 4 in both the presigned query form and the
//     Authorization header form (including minio-go's streaming
//     aws-chunked uploads), and answers S3 XML errors.
//   - Remote: any S3 service (AWS S3, Ceph, versitygw, ...) reached with
//     minio-go.
//
// In both modes upload URLs are real SigV4 query-signed URLs made by minio-go
// ([Store.PresignPut]); they sign the Content-Type and carry the declared
// maximum size in the signed query parameter [MaxSizeParam], which the
// bundled endpoint enforces (a remote S3 service ignores it, see
// [Store.PresignPut]).
//
// The package imports nothing of Outdial's; it hands out [ObjectInfo] and the
// typed errors [ErrNotFound] and [ErrInvalidKey].
package objstore
