package workflow_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/outdial/outdial/dialer/workflow"
)

// The workflow of the README: a start node with a greeting, one agent node,
// one end node.
const readmeWorkflow = `{
  "agent_url": "wss://agent.example.com/ws",
  "nodes": [
    {"id": "start", "type": "startCall", "position": {"x": 0, "y": 0},
     "data": {"name": "Greeting", "prompt": "You are calling {{ first_name }} about their order.",
              "greeting": "Hi {{ first_name | default there }}, this is Acme calling."}},
    {"id": "qualify", "type": "agentNode", "position": {"x": 0, "y": 120},
     "data": {"name": "Qualify", "prompt": "Ask whether the delivery on {{ delivery_date }} still suits them."}},
    {"id": "bye", "type": "endCall", "position": {"x": 0, "y": 240},
     "data": {"name": "Goodbye", "prompt": "Thank them and end the call."}}
  ],
  "edges": [
    {"id": "e1", "source": "start", "target": "qualify", "data": {"label": "Interested", "condition": "The callee wants to talk"}},
    {"id": "e2", "source": "qualify", "target": "bye", "data": {"label": "Done", "condition": "The callee answered"}}
  ]
}`

func ExampleValidate() {
	def, err := workflow.Parse([]byte(readmeWorkflow))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(workflow.Validate(def)), def.AgentURL())

	broken := workflow.MustParse(`{"nodes":[{"id":"s","type":"startCall","data":{"name":"S","prompt":"Hi {{ name"}}],
		"edges":[{"id":"e1","source":"s","target":"gone","data":{"label":"Go","condition":"always"}}]}`)
	enc := json.NewEncoder(os.Stdout)
	for _, e := range workflow.Validate(broken) {
		_ = enc.Encode(e)
	}
	// Output:
	// 0 wss://agent.example.com/ws
	// {"kind":"node","id":"s","field":"data.prompt","message":"Malformed template: unclosed {{ (at character 4)"}
	// {"kind":"edge","id":"e1","field":"target","message":"Edge references missing node"}
}

func ExampleRequiredVariables() {
	def := workflow.MustParse(readmeWorkflow)
	fmt.Println(workflow.RequiredVariables(def))
	// Output: [delivery_date first_name]
}

func ExampleRender() {
	def := workflow.MustParse(readmeWorkflow)
	contact := map[string]string{"first_name": "Ada"}
	text, err := workflow.Render(def.Greeting(), contact, workflow.Builtins{PhoneNumber: "+14155550100"})
	fmt.Println(text, err)
	text, _ = workflow.Render(def.Greeting(), nil, workflow.Builtins{})
	fmt.Println(text)
	// Output:
	// Hi Ada, this is Acme calling. <nil>
	// Hi there, this is Acme calling.
}
