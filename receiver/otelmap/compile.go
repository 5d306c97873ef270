package otelmap

import "strings"

// compiled is Conventions with every key split once, so that a lookup per
// span walks segments without parsing or allocating.
type compiled struct {
	// trie holds every key by segment (node 0 is the root). A span's
	// attribute tree is walked against it once, which finds all keys in
	// one pass instead of one walk per key.
	trie  []trieNode
	nkeys int

	inputs, outputs []key
	usage, attrs    []fieldKeys
	custom, display []key
	thread, isTurn  []key
	runID, runStep  []key
	runStepEnd      []key
	start, end      []key
}

type fieldKeys struct {
	field string
	keys  []key
}

func compile(c Conventions) compiled {
	cc := compiled{trie: []trieNode{{}}}
	list := func(keys []string) []key {
		out := make([]key, len(keys))
		for i, k := range keys {
			out[i] = cc.key(k)
		}
		return out
	}
	fields := func(fks []FieldKeys) []fieldKeys {
		out := make([]fieldKeys, len(fks))
		for i, fk := range fks {
			out[i] = fieldKeys{field: fk.Field, keys: list(fk.Keys)}
		}
		return out
	}
	cc.inputs, cc.outputs = list(c.Inputs), list(c.Outputs)
	cc.usage, cc.attrs = fields(c.Usage), fields(c.Attributes)
	cc.custom, cc.display = list(c.Custom), list(c.DisplayName)
	cc.thread, cc.isTurn = list(c.ThreadID), list(c.IsTurn)
	cc.runID, cc.runStep, cc.runStepEnd = list(c.WBRunID), list(c.WBRunStep), list(c.WBRunStepEnd)
	cc.start, cc.end = list(c.StartTime), list(c.EndTime)
	return cc
}

// trieNode is one key segment. keys end here; below lists the keys that
// continue under it, looked up the slow way when a span holds a
// non-object value here (a kvlist or JSON text).
type trieNode struct {
	kids  map[string]int32
	keys  []int
	below []int
}

func (cc *compiled) key(text string) key {
	k := key{text: text, segs: strings.Split(text, "."), id: cc.nkeys}
	cc.nkeys++
	n := int32(0)
	for i, seg := range k.segs {
		if i > 0 {
			cc.trie[n].below = append(cc.trie[n].below, k.id)
		}
		next, ok := cc.trie[n].kids[seg]
		if !ok {
			if cc.trie[n].kids == nil {
				cc.trie[n].kids = map[string]int32{}
			}
			next = int32(len(cc.trie))
			cc.trie = append(cc.trie, trieNode{})
			cc.trie[n].kids[seg] = next
		}
		n = next
	}
	cc.trie[n].keys = append(cc.trie[n].keys, k.id)
	if name, ok := strings.CutPrefix(text, "events."); ok {
		k.event = name
	}
	switch text {
	case "input", "inputs", "output", "outputs":
		k.generic = true
	}
	return k
}
