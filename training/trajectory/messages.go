package trajectory

import (
	"encoding/json"

	"github.com/weftdev/weft/storage"
)

// roles a chat message param may have.
var roles = map[string]bool{"developer": true, "system": true, "user": true, "assistant": true, "tool": true, "function": true}

func checkTrajectory(raw json.RawMessage, p path, stats *storage.LogStats) error {
	t, err := object(raw, p)
	if err != nil {
		return err
	}
	reward := 0.0
	if !null(t["reward"]) {
		if reward, err = number(t["reward"], p.at("reward")); err != nil {
			return err
		}
	}
	if err := checkMetrics(t["metrics"], p.at("metrics"), stats); err != nil {
		return err
	}
	if err := checkMetrics(t["auto_metrics"], p.at("auto_metrics"), nil); err != nil {
		return err
	}
	if err := checkHistory(t, p); err != nil {
		return err
	}
	if err := checkScalars(t["metadata"], p.at("metadata")); err != nil {
		return err
	}
	for _, name := range []string{"initial_policy_version", "final_policy_version"} {
		if err := integer(t[name], p.at(name)); err != nil {
			return err
		}
	}
	if _, err := optionalString(t["start_time"], p.at("start_time")); err != nil {
		return err
	}
	if err := strings_(t["logs"], p.at("logs")); err != nil {
		return err
	}
	stats.Trajectories++
	stats.RewardSum += reward
	return nil
}

// checkMetrics checks a map of numbers and booleans and, with stats,
// sums it (true is 1).
func checkMetrics(raw json.RawMessage, p path, stats *storage.LogStats) error {
	m, err := optionalObject(raw, p)
	if err != nil {
		return err
	}
	for name, v := range m {
		var b bool
		f, err := number(v, p.at(name))
		if err != nil {
			if json.Unmarshal(v, &b) != nil {
				return p.at(name).fail("float_type", "must be a number or a boolean")
			}
			if f = 0; b {
				f = 1
			}
		}
		if stats != nil {
			stats.MetricSums[name] += f
			stats.MetricCounts[name]++
		}
	}
	return nil
}

// checkScalars checks a map of strings, numbers, booleans and nulls.
func checkScalars(raw json.RawMessage, p path) error {
	m, err := optionalObject(raw, p)
	for name, v := range m {
		var x any
		if json.Unmarshal(v, &x) != nil {
			return p.at(name).fail("value_error", "must be a string, number, boolean or null")
		}
		switch x.(type) {
		case nil, string, float64, bool:
		default:
			return p.at(name).fail("value_error", "must be a string, number, boolean or null")
		}
	}
	return err
}

// checkHistory checks the conversation: messages_and_choices or
// exchanges (not both), tools, and additional histories.
func checkHistory(t map[string]json.RawMessage, p path) error {
	msgs, err := array(t["messages_and_choices"], p.at("messages_and_choices"), false)
	if err != nil {
		return err
	}
	if _, err := optionalObject(t["exchanges"], p.at("exchanges")); err != nil {
		return err
	}
	if len(msgs) > 0 && !null(t["exchanges"]) {
		return p.at("exchanges").fail("value_error", "cannot be combined with messages_and_choices; send one of them")
	}
	if err := checkMessages(msgs, p.at("messages_and_choices")); err != nil {
		return err
	}
	if err := checkTools(t["tools"], p.at("tools")); err != nil {
		return err
	}
	histories, err := array(t["additional_histories"], p.at("additional_histories"), false)
	for i, h := range histories {
		hp := p.at("additional_histories").at(i)
		hist, err := object(h, hp)
		if err != nil {
			return err
		}
		msgs, err := array(hist["messages_and_choices"], hp.at("messages_and_choices"), true)
		if err == nil {
			err = checkMessages(msgs, hp.at("messages_and_choices"))
		}
		if err == nil {
			err = checkTools(hist["tools"], hp.at("tools"))
		}
		if err != nil {
			return err
		}
	}
	return err
}

// checkMessages checks each item is a chat message param (it has a
// role) or a choice (a message and a finish_reason).
func checkMessages(items []json.RawMessage, p path) error {
	for i, item := range items {
		ip := p.at(i)
		m, err := object(item, ip)
		if err != nil {
			return err
		}
		if raw, ok := m["role"]; ok {
			var role string
			if json.Unmarshal(raw, &role) != nil || !roles[role] {
				return ip.at("role").fail("literal_error", "must be one of developer, system, user, assistant, tool, function")
			}
			continue
		}
		if _, ok := m["finish_reason"]; !ok {
			return ip.fail("value_error", "is neither a chat message (it has no role) nor a choice (it has no finish_reason)")
		}
		msg, err := object(m["message"], ip.at("message"))
		if err != nil {
			return err
		}
		var role string
		if json.Unmarshal(msg["role"], &role) != nil || role != "assistant" {
			return ip.at("message").at("role").fail("literal_error", "a choice's message must have role assistant")
		}
	}
	return nil
}

// checkTools checks an optional list of function tools.
func checkTools(raw json.RawMessage, p path) error {
	tools, err := array(raw, p, false)
	for i, tool := range tools {
		tp := p.at(i)
		t, err := object(tool, tp)
		if err != nil {
			return err
		}
		var typ string
		if json.Unmarshal(t["type"], &typ) != nil || typ != "function" {
			return tp.at("type").fail("literal_error", "must be \"function\"")
		}
		fn, err := object(t["function"], tp.at("function"))
		if err != nil {
			return err
		}
		var name string
		if json.Unmarshal(fn["name"], &name) != nil || name == "" {
			return tp.at("function").at("name").fail("string_type", "must be the function's name")
		}
	}
	return err
}
