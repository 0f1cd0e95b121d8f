// Package esierr is the shape of every error answer of the public port, as
// ESI sends it since its 2025 interface: {"error": "...", "status": 400}
// with, for a parameter or body that was refused, details naming where
// ({"location": "query.search", "message": "...", "value": ...}). error
// comes first and keeps its wording, so clients written for the older
// {"error"} body read it as before. Every layer that answers an error
// (the API's handlers and middleware, the error limiter's 420 on a
// hijacked connection, net/http's own rejections rewritten by
// api/httplog) writes this one body.
package esierr

import "encoding/json"

// Body is an error answer.
type Body struct {
	Error string `json:"error"`
	// Status repeats the HTTP status code.
	Status int `json:"status"`
	// Details say which parameters or body items were refused.
	Details []Detail `json:"details,omitempty"`
}

// Detail is one refused parameter or body item.
type Detail struct {
	// Location is where: "query.search", "path.character_id",
	// "header.X-Compatibility-Date", "body" or "body[3]".
	Location string `json:"location"`
	Message  string `json:"message"`
	// Value is what the client sent there (a string for a parameter, the
	// JSON item for a body item).
	Value any `json:"value,omitempty"`
}

// New is the body of an error answer.
func New(status int, msg string, details ...Detail) Body {
	return Body{Error: msg, Status: status, Details: details}
}

// JSON is the encoded body of an error answer.
func JSON(status int, msg string, details ...Detail) []byte {
	b, err := json.Marshal(New(status, msg, details...))
	if err != nil {
		// Only a Value that cannot be encoded gets here: the answer
		// keeps its message without the details.
		b, _ = json.Marshal(New(status, msg))
	}
	return b
}
