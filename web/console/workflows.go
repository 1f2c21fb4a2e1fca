package console

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// The workflows pages (API.md 14): the list, the definition editor
// (workflows_edit.go) and the delete confirmation. Every page reads and
// changes workflows through the public API (API.md 5); the forms work
// without JavaScript, and workflow.js makes the editor live (structured
// view, drawing, validation errors beside the nodes and edges they name)
// by calling the same API with fetch.

// workflowsPath is the workflows list; a workflow's editor is under it.
const workflowsPath = Prefix + "workflows"

// workflowItem is an entry of the API's workflow list.
type workflowItem struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// workflowJSON is the API's workflow resource; the definition is kept as
// the JSON text the API sent.
type workflowJSON struct {
	workflowItem
	Definition json.RawMessage `json:"workflow_definition"`
}

// workflowsList is the data of workflows.html.
type workflowsList struct {
	Workflows []workflowItem
	// Deleted names the workflow just deleted ("" for none).
	Deleted string
}

// workflowsPage lists the organization's workflows (the API lists them
// all, ordered by id; an organization has at most 1,000).
func workflowsPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	var list struct {
		Workflows []workflowItem `json:"workflows"`
	}
	if err := c.api(r, s).get("/api/v1/workflow", &list); err != nil {
		return err
	}
	data := workflowsList{Workflows: list.Workflows, Deleted: r.URL.Query().Get("deleted")}
	return c.render(w, r, s, "workflows.html", "Workflows", "workflows", data)
}

// workflowID reads the {id} of a workflow page: a positive integer, else
// the page answers 404 (as the API does for an id it does not know).
func workflowID(c *Console, w http.ResponseWriter, r *http.Request, s *session) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such workflow.")
		return 0, false
	}
	return id, true
}

// workflowAPIPath is the API path of workflow id.
func workflowAPIPath(id int64) string {
	return "/api/v1/workflow/" + strconv.FormatInt(id, 10)
}

// workflowEditPath is the console page of workflow id.
func workflowEditPath(id int64) string {
	return workflowsPath + "/" + strconv.FormatInt(id, 10)
}

// workflowDeleteForm is the data of workflows_delete.html.
type workflowDeleteForm struct {
	ID   int64
	Name string
	// Error is why the last attempt failed (a campaign still uses it).
	Error string
}

// workflowDeletePage asks to confirm deleting a workflow: a page of its
// own, so nothing needs a script's dialog.
func workflowDeletePage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := workflowID(c, w, r, s)
	if !ok {
		return nil
	}
	var wf workflowJSON
	if err := c.api(r, s).get(workflowAPIPath(id), &wf); err != nil {
		return err
	}
	return c.render(w, r, s, "workflows_delete.html", "Delete "+wf.Name, "workflows",
		workflowDeleteForm{ID: wf.ID, Name: wf.Name})
}

// workflowDelete deletes a workflow and goes back to the list; a workflow
// that a campaign still uses stays, and the confirmation page says why
// (409).
func workflowDelete(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := workflowID(c, w, r, s)
	if !ok {
		return nil
	}
	api := c.api(r, s)
	var wf workflowJSON
	if err := api.get(workflowAPIPath(id), &wf); err != nil {
		return err
	}
	if err := api.do(http.MethodDelete, workflowAPIPath(id), nil, nil); err != nil {
		if ae := workflowAPIError(err); ae != nil && ae.status == http.StatusConflict {
			return c.renderStatus(w, r, s, http.StatusConflict, "workflows_delete.html", "Delete "+wf.Name, "workflows",
				workflowDeleteForm{ID: wf.ID, Name: wf.Name, Error: ae.detail})
		}
		return err
	}
	http.Redirect(w, r, workflowsPath+"?deleted="+queryEscape(wf.Name), http.StatusSeeOther)
	return nil
}
