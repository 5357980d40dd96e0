// agentrig report: a trajectory read from its trajectory.jsonl lines, as the page embeds them (agentrig/view/steps.py),
// and each step's view: what the checkpoint page draws (app.js) and what a search looks at (search.js).
//
// The static report holds every step of every checkpoint: reading and formatting 50,000 steps in Python was most of
// the time it took to write; the browser does it for the one page it opens. The rules are agentrig's own (the
// Python reader's, agentrig.trajectory and agentrig.report.reader.read_steps): a line is a step when it is a JSON
// object of a known kind whose fields have the types the step declares (with the same coercions for a value written
// as text or as a whole float); a line of a known kind that is not such a step, or of a kind this version does not
// know, is shown as it was ("a step this agentrig does not know"); a line that is not JSON or not UTF-8 is left out
// with a notice; a line that is no JSON object is skipped. Numbers are written as Python writes them (f"{x:.2f}":
// the exact value rounded half to even), so that a page says what `agentrig show` says.
//
// Everything read is untrusted: values reach the page as text only (app.js sets textContent).
(function () {
  "use strict";
  var FOLD_LINES = 12, FOLD_CHARS = 1500, SEARCH_CHARS = 4000, MAX_STEP_DEPTH = 64;

  // -- numbers, as Python formats them ------------------------------------------------------------------------------
  // The digits of |x| to `d` decimals, rounded half to even on the exact binary value, as f"{x:.{d}f}".
  function fixed(x, d) {
    if (x !== x) return "nan";
    if (x === Infinity || x === -Infinity) return (x < 0 ? "-" : "") + "inf";
    var negative = x < 0 || (x === 0 && 1 / x < 0), a = Math.abs(x), digits;
    if (a >= 1e21) {  // every double this large is a whole number
      digits = BigInt(a).toString() + (d ? "." + "0".repeat(d) : "");
    } else {
      var exact = a.toFixed(Math.min(100, d + 40)), point = exact.indexOf(".");
      var head = exact.slice(0, point) + exact.slice(point + 1, point + 1 + d), rest = exact.slice(point + 1 + d);
      var up = rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || "13579".indexOf(head[head.length - 1]) >= 0));
      if (up) {  // add one to the last digit, carrying
        var chars = head.split(""), i = chars.length - 1;
        while (i >= 0 && chars[i] === "9") { chars[i] = "0"; i--; }
        if (i >= 0) chars[i] = String(+chars[i] + 1); else chars.unshift("1");
        head = chars.join("");
      }
      var whole = head.slice(0, head.length - d) || "0";
      digits = d ? whole + "." + head.slice(head.length - d) : whole;
    }
    return (negative ? "-" : "") + digits;
  }
  function round(x, d) { return Number(fixed(x, d)); }  // Python's round(x, d)
  function money(cost, digits) { return cost == null ? "n/a" : "$" + fixed(cost, digits == null ? 4 : digits); }
  function tokens(count) {
    if (count == null) return "";
    if (count >= 999950) return fixed(count / 1e6, 1) + "M";
    return count >= 1000 ? fixed(count / 1000, 1) + "k" : String(Math.trunc(count));
  }
  // repr() of a float as Python writes it: the shortest digits, positional from 1e-4 to 1e16.
  function floatRepr(x) {
    if (x !== x) return "NaN";
    if (x === Infinity || x === -Infinity) return (x < 0 ? "-" : "") + "Infinity";
    var m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential()), digits = m[2] + (m[3] || ""), exp = +m[4];
    if (exp < -4 || exp >= 16) {
      var mantissa = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
      return m[1] + mantissa + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
    }
    if (exp < 0) return m[1] + "0." + "0".repeat(-exp - 1) + digits;
    var whole = digits.slice(0, exp + 1), frac = digits.slice(exp + 1);
    return m[1] + whole + "0".repeat(Math.max(0, exp + 1 - digits.length)) + "." + (frac || "0");
  }
  // A JSON number as Python's json module writes it back: a whole number as an int (JSON.parse cannot tell 1.0 from 1).
  function numberText(x) { return Number.isInteger(x) ? BigInt(x).toString() : floatRepr(x); }

  // -- JSON and str(), as Python writes them --------------------------------------------------------------------------
  var ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"};
  function quote(s, ascii) {
    // ensure_ascii: every character beyond "~" escaped (DEL too), each UTF-16 unit as Python writes them
    var pattern = ascii ? /["\\\u0000-\u001f\u007f-\uffff]/g : /["\\\u0000-\u001f]/g;
    return '"' + s.replace(pattern, function (c) {
      if (ESCAPES[c]) return ESCAPES[c];
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    }) + '"';
  }
  // json.dumps(value, indent=indent, ensure_ascii=ascii): ", " and ": " between items, or one per line under `indent`.
  function dumps(value, indent, ascii, level) {
    level = level || 0;
    if (value === null) return "null";
    if (value === true) return "true";
    if (value === false) return "false";
    if (typeof value === "number") return numberText(value);
    if (typeof value === "string") return quote(value, ascii);
    var isList = Array.isArray(value), items = isList ? value : Object.keys(value);
    if (!items.length) return isList ? "[]" : "{}";
    var parts = items.map(function (item) {
      return isList ? dumps(item, indent, ascii, level + 1) : quote(item, ascii) + ": " + dumps(value[item], indent, ascii, level + 1);
    });
    var open = isList ? "[" : "{", close = isList ? "]" : "}";
    if (indent == null) return open + parts.join(", ") + close;
    var inner = "\n" + " ".repeat(indent * (level + 1)), outer = "\n" + " ".repeat(indent * level);
    return open + inner + parts.join("," + inner) + outer + close;
  }
  // str() of a JSON value: None, True, False, a number's repr, a string as it is, a list or dict as Python shows them.
  function pyStr(value) { return typeof value === "string" ? value : pyRepr(value); }
  function pyRepr(value) {
    if (value == null) return "None";
    if (value === true) return "True";
    if (value === false) return "False";
    if (typeof value === "number") return numberText(value);
    if (typeof value === "string") {
      var q = value.indexOf("'") >= 0 && value.indexOf('"') < 0 ? '"' : "'";
      return q + value.replace(/[\\\n\r\t]/g, function (c) { return {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[c]; })
        .replace(q === "'" ? /'/g : /(?!)/g, "\\'") + q;
    }
    if (Array.isArray(value)) return "[" + value.map(pyRepr).join(", ") + "]";
    return "{" + Object.keys(value).map(function (k) { return pyRepr(k) + ": " + pyRepr(value[k]); }).join(", ") + "}";
  }
  // Python's str.strip(): its whitespace, not JavaScript's (which has U+FEFF and lacks U+001C-U+001F, U+0085).
  var PY_SPACE = "\\t\\n\\u000b\\u000c\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var STRIP = new RegExp("^[" + PY_SPACE + "]+|[" + PY_SPACE + "]+$", "g");
  function strip(s) { return s.replace(STRIP, ""); }
  // len() of a string: its code points (a character beyond the BMP is two UTF-16 units here).
  function length(s) { var pairs = s.match(/[\ud800-\udbff][\udc00-\udfff]/g); return s.length - (pairs ? pairs.length : 0); }
  function truthy(v) { return v != null && v !== "" && v !== 0 && v !== false && !(Array.isArray(v) && !v.length); }

  // -- fields, checked as the step models check them (pydantic's coercions of JSON input) ------------------------------
  var INVALID = {};
  var TRUE = ["1", "on", "t", "true", "y", "yes"], FALSE = ["0", "off", "f", "false", "n", "no"];
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  var checks = {
    str: function (v) { return typeof v === "string" ? v : INVALID; },
    int: function (v) {
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) <= 9223372036854775807 ? v : INVALID;
      if (typeof v === "string") {
        var t = v.trim().replace(/_(?=\d)/g, "");
        if (/^[+-]?\d+(\.0*)?$/.test(t)) { var n = parseFloat(t); return n === 0 ? 0 : n; }
      }
      return INVALID;
    },
    float: function (v) {
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v === "number") return v;
      if (typeof v === "string") {
        var t = v.trim().toLowerCase();
        if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return parseFloat(t);
        if (/^[+-]?(inf|infinity)$/.test(t)) return t[0] === "-" ? -Infinity : Infinity;
        if (/^[+-]?nan$/.test(t)) return NaN;
      }
      return INVALID;
    },
    bool: function (v) {
      if (typeof v === "boolean") return v;
      if (v === 0 || v === 1) return v === 1;
      if (typeof v === "string") {
        var t = v.trim().toLowerCase();
        if (TRUE.indexOf(t) >= 0) return true;
        if (FALSE.indexOf(t) >= 0) return false;
      }
      return INVALID;
    },
    dict: function (v) { return isObject(v) ? v : INVALID; },
    time: function (v) { var t = microseconds(v); return t == null ? INVALID : t; },
  };
  // A timestamp as microseconds since the epoch: ISO 8601 text (a date alone is its midnight; a time without an offset
  // is taken as UTC) or a number of seconds (of milliseconds beyond 2e10), as pydantic reads a datetime.
  var ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;
  function microseconds(v) {
    if (typeof v === "string" && /^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/.test(v)) v = parseFloat(v);
    if (typeof v === "number") {
      if (!isFinite(v)) return null;
      var s = Math.abs(v) > 2e10 ? v / 1000 : v;
      return Math.round(s * 1e6);
    }
    if (typeof v !== "string") return null;
    var m = ISO.exec(v);
    if (!m) return null;
    var f = function (i) { return m[i] == null ? 0 : +m[i]; };
    if (f(2) < 1 || f(2) > 12 || f(3) < 1 || f(3) > 31 || f(4) > 23 || f(5) > 59 || f(6) > 59) return null;
    var ms = Date.UTC(f(1), f(2) - 1, f(3), f(4), f(5), f(6));
    if (new Date(ms).getUTCDate() !== f(3)) return null;  // 2026-02-30
    var micro = m[7] ? +(m[7] + "00000").slice(0, 6) : 0;
    var offset = m[9] ? (m[9] === "-" ? -1 : 1) * (f(10) * 60 + f(11)) * 60 : 0;
    return (ms / 1000 - offset) * 1e6 + micro;
  }

  // The fields of each kind: [name, check, default (undefined: required)]; "?" after a check: null allowed.
  var USAGE = [["input", "int", 0], ["output", "int", 0], ["cache_read", "int", 0], ["cache_write", "int", 0], ["reasoning", "int", 0]];
  var TOOL_CALL = {model: [["id", "str?", null], ["name", "str"], ["arguments", "str", ""]]};
  var MESSAGE = {model: [["role", "str"], ["content", "str", ""], ["thinking", "str?", null], ["tool_calls", {list: TOOL_CALL}, []],
                         ["tool_call_id", "str?", null], ["cut", "int", 0]]};
  var TEXT = [["content", "str"]];
  var KINDS = {
    user: TEXT, agent_text: TEXT, thinking: TEXT,
    tool_use: [["tool", "str"], ["arguments", "dict|str", {}], ["tool_call_id", "str?", null], ["result", "str?", null],
               ["is_error", "bool", false], ["exit_code", "int?", null], ["elapsed", "float?", null], ["metadata", "dict?", null]],
    error: [["message", "str"], ["error_type", "str?", null]],
    plan: [["state", "str"], ["iteration", "int", 0], ["step", "int?", null], ["tool", "str?", null], ["detail", "str?", null],
           ["plan", {list: "dict"}, null, true]],
    llm_call: [["tag", "str", "act"], ["model", "str"], ["usage", {model: USAGE}, null], ["cost", "float?", null], ["latency", "float", 0],
               ["request_id", "str?", null], ["stop_reason", "str?", null], ["sent", {list: MESSAGE}, null, true],
               ["sent_from", "int?", null], ["sent_count", "int?", null], ["tools", {list: "str"}, null, true],
               ["received", MESSAGE, null, true], ["cache_hit", "bool", false]],
  };

  function value(v, check, nullable) {
    if (v === null && nullable) return null;
    if (typeof check === "string") {
      if (check.slice(-1) === "?") return v === null ? null : value(v, check.slice(0, -1));
      if (check === "dict|str") return typeof v === "string" ? v : checks.dict(v);
      return checks[check](v);
    }
    if (check.list) {  // a list of ...
      if (!Array.isArray(v)) return INVALID;
      var out = [];
      for (var i = 0; i < v.length; i++) { var item = value(v[i], check.list); if (item === INVALID) return INVALID; out.push(item); }
      return out;
    }
    return model(v, check.model);  // a nested model: its own fields
  }
  function model(data, fields) {
    if (!isObject(data)) return INVALID;
    var out = {};
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i], name = f[0];
      if (!Object.prototype.hasOwnProperty.call(data, name)) {
        if (f.length < 3) return INVALID;  // required
        out[name] = name === "usage" ? model({}, USAGE) : f[2];
        continue;
      }
      var v = value(data[name], f[1], f[3]);
      if (v === INVALID) return INVALID;
      out[name] = v;
    }
    return out;
  }
  function depth(v) {
    var deepest = 0, stack = [[v, 0]];
    while (stack.length) {
      var top = stack.pop(), item = top[0], d = top[1];
      if (item === null || typeof item !== "object") continue;
      if (d + 1 > deepest) deepest = d + 1;
      if (deepest > MAX_STEP_DEPTH) return deepest;
      var children = Array.isArray(item) ? item : Object.keys(item).map(function (k) { return item[k]; });
      children.forEach(function (c) { stack.push([c, d + 1]); });
    }
    return deepest;
  }

  // The steps of a trajectory's text (its complete lines, blank ones and the non-UTF-8 ones numbered in `bad` kept in
  // place so that line numbers hold): {steps, unreadable} where a step is {kind, ...fields, time} or {unknown: true,
  // kind, data}; `unreadable` the lines left out, as the notice lists them.
  function read(text, bad) {
    var steps = [], unreadable = [], lines = text ? text.split("\n") : [], badSet = {}, now = Date.now() * 1000;
    (bad || []).forEach(function (n) { badSet[n] = true; });
    for (var i = 0; i < lines.length; i++) {
      var number = i + 1, line = lines[i];
      if (badSet[number]) { unreadable.push("line " + number + " is not UTF-8 text"); continue; }
      if (!/[^ \t\n\r\u000b\u000c]/.test(line)) continue;
      var data;
      try { data = JSON.parse(line); } catch (e) {
        unreadable.push("line " + number + (e instanceof RangeError ? " is nested too deeply" : " is not JSON"));
        continue;
      }
      var fields = isObject(data) && Object.prototype.hasOwnProperty.call(KINDS, data.kind) ? KINDS[data.kind] : null;
      var step = fields ? model(data, fields.concat([["timestamp", "time", null]])) : INVALID;
      if (step !== INVALID) {
        step.kind = data.kind;
        step.time = step.timestamp == null ? now : step.timestamp;
        steps.push(step);
      } else if (depth(data) > MAX_STEP_DEPTH) {  // named before the rest: a deep list too
        unreadable.push("line " + number + " is nested too deeply");
      } else if (!isObject(data)) {
        continue;
      } else {
        steps.push({unknown: true, kind: Object.prototype.hasOwnProperty.call(data, "kind") ? pyStr(data.kind) : "?", data: data});
      }
    }
    return {steps: steps, unreadable: unreadable};
  }
  // The one notice for a trajectory's unreadable lines ("" when none), as the Python reader words it.
  function notice(path, unreadable) {
    if (!unreadable.length) return "";
    var more = unreadable.length > 1 ? " (and " + (unreadable.length - 1) + " more such lines)" : "";
    return path + ": " + unreadable[0] + more + "; left out";
  }

  // -- each step as the page shows it (app.js draws these views) ---------------------------------------------------------
  function fold(text) {
    var lines = text.split("\n").length;
    return [lines > FOLD_LINES || (text.length > FOLD_CHARS && length(text) > FOLD_CHARS), lines];
  }
  // Tool arguments as people read them: a lone command as it is, else "key: value" lines (a string with line breaks
  // indented under its key, other values as JSON).
  function argumentsText(args) {
    if (typeof args === "string") return args;
    if (!isObject(args)) return dumps(args, 2, false);
    var keys = Object.keys(args);
    if (keys.length === 1 && keys[0] === "command" && typeof args.command === "string") return args.command;
    return keys.map(function (key) {
      var v = args[key];
      if (typeof v === "string" && v.indexOf("\n") >= 0) {
        return key + ":\n" + v.replace(/\n+$/, "").split("\n").map(function (l) { return "  " + l; }).join("\n");
      }
      return key + ": " + (typeof v === "string" ? v : dumps(v, null, false));
    }).join("\n");
  }
  function systemPrompt(steps) {
    for (var i = 0; i < steps.length; i++) {
      var s = steps[i];
      if (s.unknown || s.kind !== "llm_call") continue;
      var sent = s.sent || [];
      for (var j = 0; j < sent.length; j++) if (sent[j].role === "system") return sent[j].content;
    }
    return null;
  }
  // What the steps so far show: tool results by call id, user messages by text (a call's sent messages refer to them).
  function Shown(system) { this.system = system; this.results = {}; this.users = {}; }
  Shown.prototype.add = function (number, step) {
    if (step.kind === "tool_use" && truthy(step.tool_call_id)) this.results["$" + step.tool_call_id] = [number, step.result];
    else if (step.kind === "user" && !Object.prototype.hasOwnProperty.call(this.users, "$" + step.content)) this.users["$" + step.content] = number;
  };
  Shown.prototype.lookup = function (m) {
    if (m.cut) return null;
    if (m.role === "system") return m.content === this.system ? 0 : null;
    if (m.role === "tool" && m.tool_call_id != null && Object.prototype.hasOwnProperty.call(this.results, "$" + m.tool_call_id)) {
      var found = this.results["$" + m.tool_call_id];
      return found[1] != null && strip(m.content) === strip(found[1]) ? found[0] : null;
    }
    if (m.role === "user") { var n = this.users["$" + m.content]; return n == null ? null : n; }
    return null;
  };
  function messageView(m, shownAt) {
    var out = {role: m.role};
    if (shownAt != null) out.shown_at = shownAt;
    else if (m.content) out.text = m.content;
    if (m.thinking) out.thinking = m.thinking;
    if (m.tool_calls.length) out.tool_calls = m.tool_calls.map(function (c) { return c.name + " " + c.arguments; });
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (m.cut) out.cut = m.cut;
    return out;
  }
  function callView(step, shown) {
    if (step.sent == null && step.received == null) return null;
    var sent = step.sent || [], from = step.sent_from || 0, count = step.sent_count != null ? step.sent_count : sent.length;
    var summary = "sent " + sent.length + (from ? " new of " + count : "") + " message" + (count !== 1 ? "s" : "");
    if (step.received != null) summary += " · received the reply";
    var out = {summary: summary, sent: sent.map(function (m) { return messageView(m, shown ? shown.lookup(m) : null); })};
    if (from) out.sent_from = from;
    if (step.tools && step.tools.length) out.tools = step.tools.join(", ");
    if (step.received != null) out.received = messageView(step.received, null);
    return out;
  }
  var TEXT_TITLES = {user: "user", agent_text: "agent", thinking: "thinking"};
  function stepView(number, offset, step, cumulative, shown, nest) {
    var kind = step.kind, view = {number: number, kind: kind, offset: offset}, folded;
    if (TEXT_TITLES[kind]) {
      view.title = TEXT_TITLES[kind]; view.text = step.content;
      folded = fold(step.content);
      if (folded[0] || (kind === "thinking" && folded[1] > 3)) { view.folded = true; view.lines = folded[1]; }
    } else if (kind === "error") {
      view.title = "error" + (step.error_type ? " (" + step.error_type + ")" : ""); view.text = step.message; view.error = true;
    } else if (kind === "llm_call") {
      var u = step.usage, badges = ["in " + tokens(u.input + u.cache_read + u.cache_write), "out " + tokens(u.output)];
      if (u.cache_read) badges.push("cache read " + tokens(u.cache_read));
      if (u.reasoning) badges.push("reasoning " + tokens(u.reasoning));
      badges.push(money(step.cost, 6), "total " + money(cumulative, 6), fixed(step.latency, 2) + "s");
      if (step.stop_reason) badges.push("stop: " + step.stop_reason);
      view.title = "model call [" + step.tag + "] " + step.model; view.badges = badges;
      var call = callView(step, shown);
      if (call) view.call = call;
    } else if (kind === "tool_use") {
      var tb = [];
      if (step.exit_code != null) tb.push("exit " + step.exit_code);
      if (step.elapsed != null) tb.push(fixed(step.elapsed, 2) + "s");
      view.title = "tool " + step.tool; view.arguments = argumentsText(step.arguments); view.result = step.result;
      if (step.result != null) {
        folded = fold(step.result);
        if (folded[0]) { view.result_folded = true; view.result_lines = folded[1]; }
      }
      if (tb.length) view.badges = tb;
      if (step.is_error || (step.exit_code != null && step.exit_code !== 0)) view.error = true;
      var sub = nest ? nest.subagent(step.metadata) : null;
      if (sub) view.subagent = sub;
    } else if (kind === "plan") {
      var where = step.step ? " step " + step.step + (step.tool ? " " + step.tool : "") : "";
      var listing = (step.plan || []).map(function (item, i) {
        var args = Object.prototype.hasOwnProperty.call(item, "arguments") ? item.arguments : {};
        return (i + 1) + ". " + pyStr(item.tool === undefined ? null : item.tool) + " " + argumentsText(args);
      }).join("\n");
      view.title = "plan " + step.state + " (plan " + step.iteration + where + ")";
      view.text = [step.detail, listing].filter(function (p) { return p; }).join("\n");
      if (step.state === "ERROR_RECOVERY") view.error = true;
    }
    return view;
  }
  // Every step's view, and the model calls' series for the tokens-and-cost plot; `nest` finds the trajectory of a
  // subagent a tool call started (null: none shown); `top`: the system prompt is shown above this trajectory.
  function views(steps, nest, top) {
    var out = [], cumulative = 0, calls = {x: [], input: [], output: [], cost: [], cumulative: []}, model = 0, tools = 0;
    var first = null;
    for (var i = 0; i < steps.length; i++) if (!steps[i].unknown) { first = steps[i].time; break; }
    var shown = new Shown(top ? systemPrompt(steps) : null);
    steps.forEach(function (step, i) {
      var number = i + 1;
      if (step.unknown) {
        out.push({number: number, kind: step.kind, offset: "", title: "a step this agentrig does not know", text: dumps(step.data, 2, true)});
        return;
      }
      shown.add(number, step);
      var offset = "+" + fixed((step.time - first) / 1e6, 1) + "s";
      if (step.kind === "llm_call") {
        model += step.latency;
        if (cumulative != null) cumulative = step.cost == null ? null : cumulative + step.cost;
        var u = step.usage;
        calls.x.push(calls.x.length + 1); calls.input.push(u.input + u.cache_read + u.cache_write); calls.output.push(u.output);
        calls.cost.push(step.cost); calls.cumulative.push(cumulative);
      } else if (step.kind === "tool_use") {
        tools += step.elapsed || 0;
      }
      out.push(stepView(number, offset, step, cumulative, shown, nest));
    });
    return {views: out, calls: calls, model_time: model, tool_time: tools};
  }

  // The label of the subagent a tool call's metadata names ("001-helper"), as agentrig/view/subagents.py makes it.
  function subagentLabel(metadata) {
    if (!isObject(metadata)) return null;
    var name = metadata.subagent, call = metadata.call;
    if (typeof name !== "string" || typeof call !== "number" || !Number.isInteger(call) || call < 0 || call >= 1e6) return null;
    return ("00" + call).slice(-Math.max(3, String(call).length)) + "-" + name;
  }

  // The time of a checkpoint in parts (agentrig's TimeSplit): model and tool time from the trajectory, scaled down
  // together when they add up to more than the agent's time; null for a checkpoint that did not finish.
  function timeSplit(timing, model, tools) {
    if (!timing) return null;
    var agent = timing.agent || 0, note = null;
    if (model + tools > agent) {
      note = "model and tool time as recorded (" + fixed(model, 2) + "s + " + fixed(tools, 2) + "s) exceed the agent's "
        + fixed(agent, 2) + "s: shown scaled to fit";
      var scale = agent / (model + tools);
      model *= scale; tools *= scale;
    }
    var evaluation = timing.evaluation || 0;
    return {parts: {"model": round(model, 3), "tools": round(tools, 3), "other agent": round(Math.max(0, agent - model - tools), 3),
                    "evaluation": round(evaluation, 3), "harness": round(Math.max(0, (timing.elapsed || 0) - agent - evaluation), 3)},
            note: note};
  }

  // The text of one step a search looks at: what it said, ran, returned or reported (its first SEARCH_CHARS characters).
  function searchText(step) {
    var text;
    if (step.unknown) text = dumps(step.data, null, true);
    else if (TEXT_TITLES[step.kind]) text = step.content;
    else if (step.kind === "tool_use") {
      text = step.tool + " " + (typeof step.arguments === "string" ? step.arguments : dumps(step.arguments, null, false)) + "\n" + (step.result || "");
    } else if (step.kind === "error") text = (step.error_type || "") + " " + step.message;
    else if (step.kind === "llm_call") text = step.tag + " " + step.model + " " + (step.stop_reason || "");
    else if (step.kind === "plan") text = step.state + " " + (step.detail || "") + " " + dumps(step.plan || [], null, false);
    else text = "";
    return Array.from(text.slice(0, 2 * SEARCH_CHARS)).slice(0, SEARCH_CHARS).join("");
  }

  // The trajectory shards loaded in the page (search/<run>/<problem>.js: agentrigSearch(data)), by "run/problem": a
  // checkpoint page draws its steps from its problem run's, the search page searches them (it listens for each).
  var shards = {}, listeners = [];
  window.agentrigSearch = function (data) {
    shards[data.run + "/" + data.problem] = data;
    listeners.forEach(function (listener) { listener(data); });
  };
  function shard(key) { return Object.prototype.hasOwnProperty.call(shards, key) ? shards[key] : null; }
  function onShard(listener) { listeners.push(listener); }

  window.agentrigTrajectory = {
    shard: shard, onShard: onShard, read: read, notice: notice, views: views, systemPrompt: systemPrompt, subagentLabel: subagentLabel, timeSplit: timeSplit,
    searchText: searchText, fixed: fixed, money: money, tokens: tokens, dumps: dumps, length: length,
  };
})();
