// Package pricing owns LLM token prices and the cost arithmetic of the
// Weave protocol: the default price table shipped inside weft (an embedded
// CSV file, replaceable by a file of the same format), and Compute, which
// turns a call's summary.usage into the summary.weave.costs object from a
// set of candidate prices (project-level prices from storage plus the
// defaults).
//
// It is pure computation: it must never import storage, a backend or HTTP
// code.
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed default_prices.csv
var defaultPrices []byte

// Pricing levels. Project prices win over defaults.
const (
	LevelProject = "project"
	LevelDefault = "default"
	// DefaultLevelID is the pricing_level_id of default prices.
	DefaultLevelID = "default"
	// UnitUSD is the only cost unit weft's tables use.
	UnitUSD = "USD"
	// SystemCreator is the created_by of shipped prices.
	SystemCreator = "system"
)

// Price is one price row: per-token costs of one model from a date on.
type Price struct {
	ID                          string
	Level                       string // LevelProject or LevelDefault
	LevelID                     string // the project id, or DefaultLevelID
	ProviderID                  string
	LLMID                       string
	EffectiveDate               time.Time
	PromptTokenCost             float64
	CompletionTokenCost         float64
	CacheReadInputTokenCost     float64
	CacheCreationInputTokenCost float64
	PromptTokenCostUnit         string
	CompletionTokenCostUnit     string
	CreatedBy                   string
	CreatedAt                   time.Time
}

// Table is an immutable set of default prices indexed by model.
type Table struct {
	byLLM map[string][]Price
	n     int
}

// header is the required first non-comment line of a price file.
var header = []string{"provider_id", "llm_id", "effective_date", "prompt_token_cost",
	"completion_token_cost", "cache_read_input_token_cost", "cache_creation_input_token_cost"}

// Default parses the table shipped inside weft (see default_prices.csv for
// its source and date).
func Default() (*Table, error) {
	t, err := Parse(bytes.NewReader(defaultPrices))
	if err != nil {
		return nil, fmt.Errorf("embedded default_prices.csv: %w", err)
	}
	return t, nil
}

// Load reads a price file in the format of default_prices.csv; it replaces
// the shipped table entirely.
func Load(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open price file: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("price file %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a price table in CSV form: '#' comment lines, a header line
// naming the columns of default_prices.csv in order, then one price a line.
func Parse(r io.Reader) (*Table, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = len(header)
	cr.TrimLeadingSpace = true
	first, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the header line: %w", err)
	}
	if !slices.Equal(first, header) {
		return nil, fmt.Errorf("header must be %q, got %q", strings.Join(header, ","), strings.Join(first, ","))
	}
	t := &Table{byLLM: map[string][]Price{}}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		p, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		t.byLLM[p.LLMID] = append(t.byLLM[p.LLMID], p)
		t.n++
	}
}

func parseRow(rec []string) (Price, error) {
	p := Price{ProviderID: rec[0], LLMID: rec[1], Level: LevelDefault, LevelID: DefaultLevelID,
		PromptTokenCostUnit: UnitUSD, CompletionTokenCostUnit: UnitUSD, CreatedBy: SystemCreator}
	if p.ProviderID == "" || p.LLMID == "" {
		return p, errors.New("provider_id and llm_id must not be empty")
	}
	date, err := parseDate(rec[2])
	if err != nil {
		return p, err
	}
	p.EffectiveDate, p.CreatedAt = date, date
	p.ID = "default:" + p.LLMID + ":" + rec[2]
	costs := []*float64{&p.PromptTokenCost, &p.CompletionTokenCost, &p.CacheReadInputTokenCost, &p.CacheCreationInputTokenCost}
	for i, dst := range costs {
		v, err := strconv.ParseFloat(rec[3+i], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return p, fmt.Errorf("%s %q must be a non-negative number of USD per token", header[3+i], rec[3+i])
		}
		*dst = v
	}
	return p, nil
}

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("effective_date %q must be YYYY-MM-DD or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// Len is the number of price rows.
func (t *Table) Len() int { return t.n }

// Rows returns the rows of one model (any date); the caller must not
// change them.
func (t *Table) Rows(llmID string) []Price { return t.byLLM[llmID] }

// For returns the rows of the given models (all rows of each, any date).
func (t *Table) For(llmIDs []string) []Price {
	var out []Price
	for _, id := range llmIDs {
		out = append(out, t.byLLM[id]...)
	}
	return out
}
