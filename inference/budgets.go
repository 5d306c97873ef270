package inference

import (
	"fmt"
	"net/http"

	"github.com/weftdev/weft/internal/httpapi"
)

// Budgets knows which projects an enforced budget blocks: a cost alert
// with enforce set that is firing. It answers from memory, as every
// request asks.
type Budgets interface {
	// Blocking names a firing enforced budget of projectID.
	Blocking(projectID string) (name string, blocked bool)
}

// budgetMessage says which budget refuses a project's requests.
func budgetMessage(project, name string) string {
	return fmt.Sprintf("Budget exceeded: project %s is over its budget %q (a CALL_ALERT automation with enforce); "+
		"requests are refused until it resolves, or raise or disable the budget", project, name)
}

// checkBudget refuses a request an exceeded budget blocks, in the
// OpenAI error shape: a firing enforced cost alert of the project, or a
// configured budget of the project or of the key in it (spendcaps.go).
// Both sources are asked here, and only here.
func (g *Gateway) checkBudget(project, keyID string) *apiError {
	if g.budgets != nil {
		if name, blocked := g.budgets.Blocking(project); blocked {
			return &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "budget_exceeded",
				message: budgetMessage(project, name)}
		}
	}
	if msg, blocked := g.spendCaps.blocking(project, keyID); blocked {
		return &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "budget_exceeded", message: msg}
	}
	return nil
}

// budgetError is checkBudget for the Weave-shaped endpoints.
func (g *Gateway) budgetError(project, keyID string) error {
	if e := g.checkBudget(project, keyID); e != nil {
		return httpapi.Errorf(e.status, e.message)
	}
	return nil
}
