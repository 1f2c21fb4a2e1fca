package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// The workflow definition editor: one page for a new workflow
// (/console/workflows/new) and for an existing one (/console/workflows/{id}),
// with a form that saves (create or update), a form that validates the
// saved definition, and a link to the delete confirmation. Problems, from
// a 422 answer of a save or from the API's validation, are listed in the
// page as data attributes (kind, id, field, loc) that workflow.js attaches
// to the nodes and edges they name; without JavaScript the list is shown
// as it is.

// starterDefinition is the definition a new workflow starts from: one
// valid call, greeting then goodbye, to edit.
const starterDefinition = `{
  "nodes": [
    {"id": "start", "type": "startCall", "position": {"x": 0, "y": 0},
     "data": {"name": "Greeting", "prompt": "You are calling {{first_name | default there}}.", "greeting": "Hi {{first_name | default there}}!"}},
    {"id": "bye", "type": "endCall", "position": {"x": 280, "y": 0},
     "data": {"name": "Goodbye", "prompt": "Thank them and hang up."}}
  ],
  "edges": [
    {"id": "e1", "source": "start", "target": "bye",
     "data": {"label": "Done", "condition": "The message was delivered"}}
  ]
}`

// workflowEditor is the data of workflows_edit.html.
type workflowEditor struct {
	// ID is the workflow's id, 0 for a new one.
	ID        int64
	Name      string
	CreatedAt string
	UpdatedAt string
	// Definition is the text of the editor: the saved definition
	// pretty-printed, or what the operator sent when it was refused.
	Definition string
	// Notice is a line of good news ("Saved.").
	Notice string
	// Error is a problem not about one field (a 409, a too large form).
	Error string
	// NameError and DefinitionError are problems of those fields;
	// DefinitionError includes a JSON syntax error with its line and
	// column.
	NameError       string
	DefinitionError string
	// Problems are the validation errors (or a 422's problems) to attach
	// to the nodes and edges they name.
	Problems []workflowProblem
	// Unsaved is set when the page shows a refused form: its text is not
	// the saved one.
	Unsaved bool
	// Validated is set when Problems come from a validation; Valid then
	// says whether the saved definition passed.
	Validated bool
	Valid     bool
}

// workflowProblem is one problem of a definition, in the shape the page
// lists it: a validation error (kind, id, field; API.md 5.2) or a 422
// problem (loc, joined with dots).
type workflowProblem struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Field   string `json:"field"`
	Loc     string `json:"-"`
	Message string `json:"message"`
}

// UnmarshalJSON reads a validation error, whose id and field may be null.
func (p *workflowProblem) UnmarshalJSON(b []byte) error {
	var v struct {
		Kind    string  `json:"kind"`
		ID      *string `json:"id"`
		Field   *string `json:"field"`
		Message string  `json:"message"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = workflowProblem{Kind: v.Kind, Message: v.Message}
	if v.ID != nil {
		p.ID = *v.ID
	}
	if v.Field != nil {
		p.Field = *v.Field
	}
	return nil
}

// Where says which element a problem is about, for the list shown
// without JavaScript ("node n2, data.prompt").
func (p workflowProblem) Where() string {
	switch {
	case p.Loc != "":
		return p.Loc
	case p.Kind == "":
		return ""
	}
	where := p.Kind
	if p.ID != "" {
		where += " " + p.ID
	}
	if p.Field != "" {
		where += ", " + p.Field
	}
	return where
}

// workflowNewPage shows the editor of a new workflow.
func workflowNewPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	return c.render(w, r, s, "workflows_edit.html", "New workflow", "workflows",
		workflowEditor{Definition: starterDefinition})
}

// workflowEditPage shows the editor of a saved workflow.
func workflowEditPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := workflowID(c, w, r, s)
	if !ok {
		return nil
	}
	ed, err := loadWorkflowEditor(c, r, s, id)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("saved") != "" {
		ed.Notice = "Saved."
	}
	return c.render(w, r, s, "workflows_edit.html", ed.Name, "workflows", ed)
}

// loadWorkflowEditor reads workflow id through the API into an editor.
func loadWorkflowEditor(c *Console, r *http.Request, s *session, id int64) (workflowEditor, error) {
	var wf workflowJSON
	if err := c.api(r, s).get(workflowAPIPath(id), &wf); err != nil {
		return workflowEditor{}, err
	}
	def, err := prettyJSON(wf.Definition)
	if err != nil {
		return workflowEditor{}, fmt.Errorf("workflow %d: %w", id, err)
	}
	return workflowEditor{ID: wf.ID, Name: wf.Name, CreatedAt: wf.CreatedAt, UpdatedAt: wf.UpdatedAt, Definition: def}, nil
}

// workflowCreate saves a new workflow from the editor's form and opens its
// page; a refused one shows the editor again with the problems (422, or
// 409 for a name in use).
func workflowCreate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	return saveWorkflow(c, w, r, s, 0)
}

// workflowUpdate saves the editor's form over workflow {id}.
func workflowUpdate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := workflowID(c, w, r, s)
	if !ok {
		return nil
	}
	return saveWorkflow(c, w, r, s, id)
}

// saveWorkflow creates (id 0) or updates workflow id from the form fields
// name and workflow_definition. The definition must be JSON text; it is
// sent to the API as written (key order and number spelling kept).
func saveWorkflow(c *Console, w http.ResponseWriter, r *http.Request, s *session, id int64) error {
	ed := workflowEditor{ID: id, Name: r.PostFormValue("name"), Definition: r.PostFormValue("workflow_definition")}
	title := "New workflow"
	if id != 0 {
		title = ed.Name
		var wf workflowJSON
		if err := c.api(r, s).get(workflowAPIPath(id), &wf); err != nil {
			return err // another organization's, or gone: 404
		}
		ed.CreatedAt, ed.UpdatedAt = wf.CreatedAt, wf.UpdatedAt
	}
	refuse := func(status int) error {
		ed.Unsaved = true
		return c.renderStatus(w, r, s, status, "workflows_edit.html", title, "workflows", ed)
	}
	def := []byte(strings.TrimSpace(ed.Definition))
	if msg := jsonSyntaxError(def); msg != "" {
		ed.DefinitionError = msg
		return refuse(http.StatusUnprocessableEntity)
	}
	body := map[string]any{"name": ed.Name, "workflow_definition": json.RawMessage(def)}
	method, path := http.MethodPost, "/api/v1/workflow"
	if id != 0 {
		method, path = http.MethodPut, workflowAPIPath(id)
	}
	var saved workflowJSON
	err := c.api(r, s).do(method, path, body, &saved)
	if ae := workflowAPIError(err); ae != nil {
		switch ae.status {
		case http.StatusUnprocessableEntity:
			ed.addAPIProblems(ae.problems)
			return refuse(ae.status)
		case http.StatusConflict, http.StatusRequestEntityTooLarge:
			if strings.Contains(ae.detail, "already exists") {
				ed.NameError = ae.detail // a name in use, not the workflow limit
			} else {
				ed.Error = ae.detail
			}
			return refuse(ae.status)
		}
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, workflowEditPath(saved.ID)+"?saved=1", http.StatusSeeOther)
	return nil
}

// addAPIProblems puts a 422's problems on the editor: the name's and the
// definition's beside those fields, the others (a node's or an edge's
// place inside the definition) in the list.
func (ed *workflowEditor) addAPIProblems(problems []wire.Problem) {
	for _, p := range problems {
		loc := make([]string, len(p.Loc))
		for i, l := range p.Loc {
			loc[i] = fmt.Sprint(l)
		}
		joined := strings.Join(loc, ".")
		switch joined {
		case "body.name":
			ed.NameError = p.Msg
		case "body.workflow_definition":
			ed.DefinitionError = p.Msg
		default:
			ed.Problems = append(ed.Problems, workflowProblem{Loc: joined, Message: p.Msg})
		}
	}
}

// workflowValidate validates the saved definition of workflow {id} (POST
// /api/v1/workflow/{id}/validate) and shows the editor with the errors.
func workflowValidate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := workflowID(c, w, r, s)
	if !ok {
		return nil
	}
	ed, err := loadWorkflowEditor(c, r, s, id)
	if err != nil {
		return err
	}
	var res struct {
		IsValid bool              `json:"is_valid"`
		Errors  []workflowProblem `json:"errors"`
	}
	if err := c.api(r, s).do(http.MethodPost, workflowAPIPath(id)+"/validate", nil, &res); err != nil {
		return err
	}
	ed.Validated, ed.Valid, ed.Problems = true, res.IsValid, res.Errors
	return c.render(w, r, s, "workflows_edit.html", ed.Name, "workflows", ed)
}

// workflowAPIError returns err's *apiError, nil when it has none.
func workflowAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// jsonSyntaxError returns "" when text is one JSON value, else where and
// why it is not ("JSON syntax error at line 3, column 7: ...").
func jsonSyntaxError(text []byte) string {
	if len(text) == 0 {
		return "The definition is empty; it must be a JSON object."
	}
	var v any
	err := json.Unmarshal(text, &v)
	if err == nil {
		return ""
	}
	offset := int64(len(text))
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	line, col := lineColumn(text, offset)
	return fmt.Sprintf("JSON syntax error at line %d, column %d: %s", line, col, strings.TrimPrefix(err.Error(), "json: "))
}

// lineColumn returns the 1-based line and column (in characters) of the
// byte offset in text; json.SyntaxError's offset is just past the bad
// byte, so the column names that byte.
func lineColumn(text []byte, offset int64) (line, col int) {
	offset = min(max(offset, 1), int64(len(text)))
	before := text[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	col = len([]rune(string(before[lineStart:]))) + 1
	return line, col
}

// compactIndentBytes is the size of a definition above which the editor
// puts each node and edge on one line of its own instead of indenting
// every level: a browser's textarea slows down with tens of thousands of
// lines.
const compactIndentBytes = 64 << 10

// prettyJSON lays a definition out for the editor, two spaces a level
// (only the top two levels for a large one: one node or edge a line),
// keeping key order and number spelling, and turns the API's \u003c,
// \u003e and \u0026 escapes back into the characters (the page escapes
// them as HTML text).
func prettyJSON(raw []byte) (string, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", fmt.Errorf("read definition: %w", err)
	}
	b := compact.Bytes()
	maxDepth := 1 << 30
	if len(b) > compactIndentBytes {
		maxDepth = 2
	}
	out := make([]byte, 0, len(b)+len(b)/4)
	newline := func(depth int) {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inString {
			switch {
			case ch == '"':
				inString = false
			case ch == '\\' && i+1 < len(b):
				if r, ok := htmlEscape(b[i+1:]); ok {
					out, i = append(out, r), i+5
					continue
				}
				out = append(out, ch, b[i+1])
				i++
				continue
			}
			out = append(out, ch)
			continue
		}
		switch ch {
		case '"':
			inString = true
			out = append(out, ch)
		case '{', '[':
			out = append(out, ch)
			depth++
			if i+1 < len(b) && (b[i+1] == '}' || b[i+1] == ']') {
				out, i, depth = append(out, b[i+1]), i+1, depth-1
			} else if depth <= maxDepth {
				newline(depth)
			}
		case '}', ']':
			if depth <= maxDepth {
				newline(depth - 1)
			}
			depth--
			out = append(out, ch)
		case ',':
			out = append(out, ch)
			if depth <= maxDepth {
				newline(depth)
			}
		case ':':
			out = append(out, ':')
			if depth <= maxDepth {
				out = append(out, ' ')
			}
		default:
			out = append(out, ch)
		}
	}
	return string(out), nil
}

// htmlEscape reads the escape after a backslash in a JSON string: for
// u003c, u003e and u0026 (as the API writes <, > and &) it returns the
// character.
func htmlEscape(esc []byte) (byte, bool) {
	if len(esc) < 5 || esc[0] != 'u' {
		return 0, false
	}
	switch strings.ToLower(string(esc[1:5])) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	}
	return 0, false
}
