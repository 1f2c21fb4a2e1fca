-- name: InsertWorkflow :one
INSERT INTO workflows (organization_id, name, definition, created_at, updated_at)
VALUES (@organization_id, @name, @definition, @created_at, @updated_at) RETURNING *;

-- name: GetWorkflow :one
SELECT * FROM workflows WHERE id = @id AND organization_id = @organization_id;

-- name: ListWorkflows :many
SELECT id, name, created_at, updated_at FROM workflows WHERE organization_id = @organization_id ORDER BY id;

-- name: WorkflowNameTaken :one
SELECT count(*) FROM workflows WHERE organization_id = @organization_id AND name = @name AND id != @id;

-- name: UpdateWorkflow :one
-- Writes only what the update changes (NULL keeps the column): a rename
-- and a definition change at once, on any nodes, both stay.
UPDATE workflows SET name = COALESCE(sqlc.narg('name'), name), definition = COALESCE(sqlc.narg('definition'), definition),
    updated_at = @updated_at
WHERE id = @id AND organization_id = @organization_id RETURNING *;

-- name: DeleteWorkflow :execrows
DELETE FROM workflows WHERE id = @id AND organization_id = @organization_id;

-- name: CountWorkflows :one
SELECT count(*) FROM workflows WHERE organization_id = @organization_id;
