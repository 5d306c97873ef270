package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// testModelsListed lists a project's models by name, and no other
// project's.
func testModelsListed(t *testing.T, s storage.TrainingBackend) {
	for _, m := range []storage.TrainingModel{trainingModel("m1", "acme/p", "zeta"), trainingModel("m2", "acme/p", "alpha"),
		trainingModel("m3", "acme/q", "beta"), trainingModel("m4", "acme/pp", "gamma")} {
		_, _, err := s.CreateTrainingModel(bg, m)
		must(t, err)
	}
	got, err := s.ListTrainingModels(bg, "acme/p")
	must(t, err)
	if len(got) != 2 || got[0].ID != "m2" || got[1].ID != "m1" || got[0].BaseModel == "" || !got[0].CreatedAt.Equal(base) {
		t.Fatalf("models of acme/p = %+v, want alpha (m2), zeta (m1)", got)
	}
	_, err = s.DeleteTrainingModel(bg, got[0])
	must(t, err)
	got, err = s.ListTrainingModels(bg, "acme/p")
	must(t, err)
	if len(got) != 1 || got[0].ID != "m1" {
		t.Fatalf("models after deleting alpha = %+v, want zeta", got)
	}
	none, err := s.ListTrainingModels(bg, "acme/empty")
	must(t, err)
	if none == nil || len(none) != 0 {
		t.Fatalf("models of a project without any = %#v, want an empty list", none)
	}
}

// testJobsListed pages a project's jobs newest first, ties broken by id,
// optionally of one model, and refuses a cursor of another project.
func testJobsListed(t *testing.T, s storage.TrainingBackend) {
	var saved []storage.TrainingJob
	for i, id := range []string{"j1", "j2", "j3", "j4", "j5"} {
		j := trainingJob(id, "acme/p", int64(i+1))
		j.CreatedAt = base.Add(time.Duration(min(i, 3)) * time.Second) // j4 and j5 were created together
		if id == "j2" {
			j.ModelID = "m2"
		}
		saved = append(saved, j)
	}
	saved = append(saved, trainingJob("x1", "acme/q", 9))
	must(t, s.SaveTrainingJobs(bg, saved, nil))
	var ids []string
	after := ""
	for pages := 0; pages < 5; pages++ {
		page, more, err := s.ListTrainingJobs(bg, storage.TrainingJobPage{ProjectID: "acme/p", AfterID: after, Limit: 2})
		must(t, err)
		for _, j := range page {
			ids = append(ids, j.ID)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	if got := strings.Join(ids, ","); got != "j5,j4,j3,j2,j1" {
		t.Fatalf("pages of acme/p = %s, want j5,j4,j3,j2,j1", got)
	}
	one, more, err := s.ListTrainingJobs(bg, storage.TrainingJobPage{ProjectID: "acme/p", ModelID: "m2", Limit: 10})
	must(t, err)
	if len(one) != 1 || one[0].ID != "j2" || more || one[0].Status != storage.JobQueued {
		t.Fatalf("jobs of model m2 = %+v more=%v, want j2", one, more)
	}
	_, _, err = s.ListTrainingJobs(bg, storage.TrainingJobPage{ProjectID: "acme/p", AfterID: "x1", Limit: 2})
	wantKind(t, "a cursor naming another project's job", err, storage.ErrInvalidArgument)
}
