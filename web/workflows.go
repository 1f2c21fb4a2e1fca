package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/workflow"
	"github.com/outdial/outdial/store"
)

type workflowItem struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// writeWorkflow answers 200 with the full form of a workflow. The definition
// is written as the stored JSON text, byte for byte (json.Marshal would
// compact it and escape <, > and &).
func writeWorkflow(w http.ResponseWriter, wf *store.Workflow) {
	name, _ := json.Marshal(wf.Name)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"id":%d,"name":%s,"workflow_definition":`, wf.ID, name)
	b.Write(wf.Definition)
	fmt.Fprintf(&b, `,"created_at":%q,"updated_at":%q}`+"\n", ts(wf.CreatedAt), ts(wf.UpdatedAt))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes()) //nolint:errcheck // client gone
}

// definitionField reads workflow_definition: it must be a JSON object of
// at most maxBytes bytes (as stored: the text sent, without surrounding
// white space; else 422 definition_too_large, the definition not echoed);
// its bytes are kept exactly as sent.
func definitionField(f fields, raw map[string]json.RawMessage, required bool, maxBytes int) (json.RawMessage, bool) {
	v, has := f.get("workflow_definition")
	if !has {
		if required {
			f.missing("workflow_definition")
		}
		return nil, false
	}
	if _, isObj := v.(map[string]any); !isObj {
		f.p.Add(at(f.loc, "workflow_definition"), "dict_type", "Input should be a valid dictionary", v, nil)
		return nil, false
	}
	def := bytes.TrimSpace(raw["workflow_definition"])
	if len(def) > maxBytes {
		f.p.Add(at(f.loc, "workflow_definition"), "definition_too_large",
			fmt.Sprintf("Value error, the workflow definition is %d bytes; at most %d are allowed", len(def), maxBytes),
			nil, map[string]any{"max_bytes": maxBytes, "actual_bytes": len(def)})
		return nil, false
	}
	return def, true
}

func (s *Server) createWorkflow(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, raw, err := readJSONObjectRaw(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	name, _, _ := f.Name("name", true, false, 1, 255)
	def, _ := definitionField(f, raw, true, s.db.WorkflowLimits().MaxDefinitionBytes)
	if err := p.Err(); err != nil {
		return err
	}
	wf, err := s.db.CreateWorkflow(r.Context(), org, name, def)
	if err != nil {
		return err
	}
	writeWorkflow(w, wf)
	return nil
}

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	list, err := s.db.ListWorkflows(r.Context(), org)
	if err != nil {
		return err
	}
	out := make([]workflowItem, len(list))
	for i, wf := range list {
		out[i] = workflowItem{ID: wf.ID, Name: wf.Name, CreatedAt: ts(wf.CreatedAt), UpdatedAt: ts(wf.UpdatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"workflows": out})
	return nil
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "workflow_id")
	if err != nil {
		return err
	}
	wf, err := s.db.GetWorkflow(r.Context(), org, id)
	if err != nil {
		return err
	}
	writeWorkflow(w, wf)
	return nil
}

func (s *Server) updateWorkflow(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "workflow_id")
	body, raw, err := readJSONObjectRaw(r)
	if err != nil {
		return joinProblems(idErr, err)
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	var name *string
	if v, sent := body["name"]; sent && v != nil {
		if n, _, ok := f.Name("name", false, false, 1, 255); ok {
			name = &n
		}
	}
	var def json.RawMessage
	if v, sent := body["workflow_definition"]; sent && v != nil {
		def, _ = definitionField(f, raw, false, s.db.WorkflowLimits().MaxDefinitionBytes)
	}
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	wf, err := s.db.UpdateWorkflow(r.Context(), org, id, name, def)
	if err != nil {
		return err
	}
	writeWorkflow(w, wf)
	return nil
}

func (s *Server) deleteWorkflow(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "workflow_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteWorkflow(r.Context(), org, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// validateWorkflow checks the stored definition; it never places a call.
func (s *Server) validateWorkflow(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "workflow_id")
	if err != nil {
		return err
	}
	wf, err := s.db.GetWorkflow(r.Context(), org, id)
	if err != nil {
		return err
	}
	problems := []workflow.Error{}
	def, err := workflow.Parse(wf.Definition)
	if err != nil {
		// Stored definitions are always valid JSON objects; keep the answer
		// well-formed anyway.
		problems = append(problems, workflow.Error{Kind: workflow.KindWorkflow, Message: "The workflow definition is not valid JSON"})
	} else if errs := workflow.Validate(def); len(errs) > 0 {
		problems = errs
	}
	writeJSON(w, http.StatusOK, map[string]any{"is_valid": len(problems) == 0, "errors": problems})
	return nil
}
