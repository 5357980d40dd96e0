// agentrig report: plots (uPlot, shipped beside this file), a checkpoint's trajectory drawn from its data, the results
// filter, and live refresh of a run in progress (served reports only: a page opened from disk cannot re-read itself).
(function () {
  "use strict";
  var COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];
  var SEGMENTS = {"model": "#2563eb", "tools": "#16a34a", "other agent": "#94a3b8", "agent": "#2563eb", "evaluation": "#ea580c",
                  "harness": "#e2e8f0"};
  var charts = [];

  function data() {
    var el = document.getElementById("plot-data");
    return el ? JSON.parse(el.textContent) : null;
  }

  // Number formats: tick labels take the axis's increment (as many decimals as it needs: $0.0002, not
  // $0.00020); values shown on hover take three significant digits.
  function decimals(incr) {
    for (var d = 0; d < 8; d++) if (Math.abs(incr * Math.pow(10, d) - Math.round(incr * Math.pow(10, d))) < 1e-6) return d;
    return 8;
  }
  function sig(v) { return v === 0 ? 0 : Math.max(0, Math.min(8, 2 - Math.floor(Math.log10(Math.abs(v))))); }
  function compact(v, digits) {
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1000) return (v / 1000).toFixed(1) + "k";
    return v.toFixed(digits);
  }
  var FORMATS = {
    pct: {tick: function (v, incr) { return v.toFixed(decimals(incr)) + "%"; },
          value: function (v) { return v.toFixed(v % 1 ? 1 : 0) + "%"; }},
    usd: {tick: function (v, incr) { return "$" + v.toFixed(decimals(incr)); },
          value: function (v) { return "$" + v.toFixed(Math.max(2, sig(v))); }},
    num: {tick: function (v, incr) { return compact(v, decimals(incr)); },
          value: function (v) { return Math.abs(v) >= 1000 ? compact(v, 1) : String(Math.round(v * 100) / 100); }},
  };
  // The top of an axis for data up to `max`: a round number a little above it.
  function niceTop(max) {
    var mag = Math.pow(10, Math.floor(Math.log10(max)));
    return Math.ceil(max * 1.02 / mag * 2) / 2 * mag;
  }
  // Tick steps of 1, 2 and 5 times a power of ten (uPlot's own include 2.5: $0.0025 needs a fourth decimal).
  var INCRS = [];
  for (var e = -8; e <= 9; e++) [1, 2, 5].forEach(function (m) { INCRS.push(+(m + "e" + e)); });

  // Axis ranges that mean something on constant data: a pass rate is always 0-100%; amounts start at 0
  // and reach a little above the largest, with an empty (all-zero) series on 0 to `unit`.
  function range(kind) {
    return function (u, min, max) {
      if (kind === "pct") return [0, 100];
      var unit = kind === "usd" ? 0.01 : 1;
      if (max == null || !(max > 0)) return [0, unit];
      return [0, niceTop(max)];
    };
  }
  // An axis as wide as its longest tick label (the axis title never overlaps the labels).
  function axisSize(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    var size = axis.ticks.size + axis.gap;
    var longest = (values || []).reduce(function (a, v) { return String(v).length > a.length ? String(v) : a; }, "");
    if (longest) {
      u.ctx.font = axis.font[0];
      size += u.ctx.measureText(longest).width / (window.devicePixelRatio || 1);
    }
    return Math.ceil(size) + 2;
  }

  // What each value axis shows (its title, tick labels and width), on the plot's element as data-axes:
  // the page's state can be read (by tests, say) without looking into the canvas.
  function describe(el, u) {
    el.dataset.axes = JSON.stringify(u.axes.slice(1).map(function (a) {
      return {label: a.label, ticks: a._values || [], size: a._size, font: a.font[0], gap: a.gap, tick: a.ticks.size};
    }));
  }

  function legend(el, series) {
    var box = document.createElement("div"); box.className = "legend";
    series.forEach(function (s) {
      var item = document.createElement("span"); item.className = "legend-item"; item.title = s.title || s.label;
      var swatch = document.createElement("i"); swatch.style.background = s.color;
      var text = document.createElement("span"); text.textContent = s.label;
      item.appendChild(swatch); item.appendChild(text);
      box.appendChild(item);
    });
    el.appendChild(box);
  }

  // The values under the cursor, in a box beside it (inside the plot's card: it may reach over the axes).
  function tooltip(el, opts, series) {
    var tip = document.createElement("div"); tip.className = "tip"; tip.hidden = true;
    return {
      init: function () { el.appendChild(tip); },
      move: function (u) {
        var i = u.cursor.idx;
        if (i == null || u.cursor.left < 0) { tip.hidden = true; return; }
        tip.textContent = "";
        var head = document.createElement("b"); head.textContent = opts.xLabel + " " + u.data[0][i]; tip.appendChild(head);
        series.forEach(function (s, k) {
          var v = u.data[k + 1][i];
          var row = document.createElement("div");
          var swatch = document.createElement("i"); swatch.style.background = s.color; row.appendChild(swatch);
          row.appendChild(document.createTextNode(s.label + ": " + (v == null ? "none" : FORMATS[s.kind].value(v))));
          tip.appendChild(row);
        });
        tip.hidden = false;
        var over = u.over.getBoundingClientRect(), box = el.getBoundingClientRect();
        var x = over.left - box.left + u.cursor.left, y = over.top - box.top + u.cursor.top;
        var left = x + 12, top = y + 12;
        if (left + tip.offsetWidth > el.clientWidth) left = Math.max(0, x - tip.offsetWidth - 12);
        if (top + tip.offsetHeight > el.clientHeight) top = Math.max(0, y - tip.offsetHeight - 12);
        tip.style.left = left + "px"; tip.style.top = top + "px";
      },
    };
  }

  // A line plot: `series` of {label, title, values, kind (pct, usd, num), scale}; `opts.scales` of {name, label, kind}.
  function line(el, x, series, opts) {
    if (!el) return;
    el.textContent = "";
    if (typeof uPlot === "undefined" || !x.length) {
      el.textContent = opts.empty; el.className += " empty";
      return;
    }
    var width = Math.max(280, el.clientWidth || 480);
    var lo = x[0], hi = x[x.length - 1];
    var scales = {x: {time: false, range: lo === hi ? [lo - 1, hi + 1] : [lo, hi]}};
    var axes = [{label: opts.xLabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
                 values: function (u, vals) { return vals.map(function (v) { return String(v); }); }}];
    opts.scales.forEach(function (s, i) {
      scales[s.name] = {range: range(s.kind)};
      axes.push({scale: s.name, label: s.label, side: i === 0 ? 3 : 1, grid: {show: i === 0}, size: axisSize, incrs: INCRS,
                 values: function (u, vals, axisIdx, space, incr) {
                   return vals.map(function (v) { return v == null ? "" : FORMATS[s.kind].tick(v, incr); });
                 }});
    });
    series.forEach(function (s, i) { s.color = s.color || COLORS[i % COLORS.length]; });
    var tip = tooltip(el, opts, series);
    var u = new uPlot({
      width: width, height: 220, legend: {show: false},
      scales: scales, axes: axes,
      hooks: {init: [tip.init], setCursor: [tip.move], draw: [function (u) { describe(el, u); }]},
      series: [{label: opts.xLabel}].concat(series.map(function (s) {
        return {label: s.label, scale: s.scale, stroke: s.color, width: 2, spanGaps: true, points: {show: x.length <= 60}};
      })),
    }, [x].concat(series.map(function (s) { return s.values; })), el);
    legend(el, series);
    charts.push(u);
  }

  // Seconds to the tenth, or to the hundredth in a bar under a second.
  function seconds(v, total) { return (v || 0).toFixed(total < 1 ? 2 : 1) + "s"; }

  // The parts of a bar rounded as `seconds` rounds them, so that the shown parts add up to the shown
  // total (largest remainders get the units that rounding each part on its own would lose or add).
  function roundedParts(parts, total) {
    var scale = total < 1 ? 100 : 10, keys = Object.keys(parts), units = {}, sum = 0;
    keys.forEach(function (k) { units[k] = Math.floor((parts[k] || 0) * scale); sum += units[k]; });
    var left = Math.round(total * scale) - sum;
    keys.slice().sort(function (a, b) {
      return ((parts[b] || 0) * scale - units[b]) - ((parts[a] || 0) * scale - units[a]);
    }).forEach(function (k) { if (left > 0 && (parts[k] || 0) > 0) { units[k] += 1; left -= 1; } });
    var shown = {};
    keys.forEach(function (k) { shown[k] = units[k] / scale; });
    return shown;
  }

  // Stacked bars of time parts: `rows` of {label, title, parts: {name: seconds}, note}.
  function bars(el, rows) {
    if (!el) return;
    el.innerHTML = "";
    var max = 0;
    rows.forEach(function (r) {
      var total = 0;
      Object.keys(r.parts).forEach(function (k) { total += r.parts[k] || 0; });
      r.total = total; max = Math.max(max, total);
    });
    rows.forEach(function (r) {
      var row = document.createElement("div"); row.className = "bar-row";
      var label = document.createElement("span"); label.className = "bar-label"; label.textContent = r.label;
      label.title = r.title || r.label;
      var bar = document.createElement("div"); bar.className = "bar";
      Object.keys(r.parts).forEach(function (k) {
        var v = r.parts[k] || 0;
        if (!max || v <= 0) return;
        var seg = document.createElement("span");
        seg.className = "seg"; seg.style.width = (100 * v / max) + "%"; seg.style.background = SEGMENTS[k] || "#64748b";
        seg.title = k + ": " + v.toFixed(2) + "s" + (k === "harness" ? " (workspace set-up, snapshot, diff, records)" : "");
        bar.appendChild(seg);
      });
      var legend = document.createElement("span"); legend.className = "bar-legend";
      var shown = roundedParts(r.parts, r.total);
      legend.textContent = Object.keys(r.parts).map(function (k) { return k + " " + seconds(shown[k], r.total); }).join(" · ")
        + " · total " + seconds(r.total, r.total);
      row.appendChild(label); row.appendChild(bar); row.appendChild(legend);
      if (r.note) { var note = document.createElement("span"); note.className = "bar-note"; note.textContent = r.note; row.appendChild(note); }
      el.appendChild(row);
    });
  }

  // -- a checkpoint's trajectory, drawn from the views trajectory.js makes of its lines (agentrig/view/steps.py embeds
  // them): the <li> of each step, in place. Every value is set as text.
  function node(tag, cls, text) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (text != null && text !== "") el.textContent = text;
    return el;
  }
  function plural(n, word) { return n + " " + (n === 1 ? word : word + "s"); }
  function entries(n) { return n + " " + (n === 1 ? "entry" : "entries"); }

  function message(m, prefix) {
    var box = node("div", "msg role-" + m.role), head = m.role;
    if (m.tool_call_id) head += " · " + m.tool_call_id;
    if (m.cut) head += " · " + m.cut + " characters cut";
    box.appendChild(node("span", "msg-role", head));
    if (m.shown_at === 0) box.appendChild(node("p", "muted shown-at", "the system prompt, shown above the trajectory"));
    else if (m.shown_at != null) {
      var p = node("p", "muted shown-at", "the text of "), a = node("a", null, "step " + m.shown_at);
      a.setAttribute("href", "#" + prefix + m.shown_at);
      p.appendChild(a); box.appendChild(p);
    }
    if (m.thinking) box.appendChild(node("pre", "text thinking", m.thinking));
    if (m.text) box.appendChild(node("pre", "text", m.text));
    (m.tool_calls || []).forEach(function (c) { box.appendChild(node("pre", "args", c)); });
    return box;
  }

  // What a model call sent and received, folded: the new messages, the tools offered, the reply.
  function callMessages(c, prefix) {
    var box = node("details", "call-messages");
    box.appendChild(node("summary", null, c.summary));
    if (c.sent_from) {
      box.appendChild(node("p", "muted", plural(c.sent_from, "earlier message")
        + " of the conversation not repeated: sent and received by the calls before."));
    }
    if (c.tools) box.appendChild(node("p", "muted", "tools offered: " + c.tools));
    [["sent", c.sent || []], ["received", c.received ? [c.received] : []]].forEach(function (section) {
      if (!section[1].length) return;
      var part = node("div", "msgs " + section[0]);
      part.appendChild(node("h4", null, section[0]));
      section[1].forEach(function (m) { part.appendChild(message(m, prefix)); });
      box.appendChild(part);
    });
    return box;
  }

  function folded(summary, cls, text, preCls) {
    var box = node("details", cls);
    box.appendChild(node("summary", null, summary));
    box.appendChild(node("pre", preCls, text));
    return box;
  }

  function stepItem(s, prefix) {
    var li = node("li", "step k-" + s.kind + (s.error ? " is-error" : ""));
    li.setAttribute("id", prefix + s.number);
    li.setAttribute("data-kind", s.kind);
    var head = node("div", "step-head");
    head.appendChild(node("span", "num", String(s.number)));
    head.appendChild(node("span", "kind", s.title));
    head.appendChild(node("span", "offset", s.offset));
    (s.badges || []).forEach(function (b) { head.appendChild(node("span", "badge", b)); });
    li.appendChild(head);
    if (s.text != null) li.appendChild(s.folded ? folded(plural(s.lines, "line"), null, s.text, "text") : node("pre", "text", s.text));
    if (s.call) li.appendChild(callMessages(s.call, prefix));
    if (s.arguments != null) li.appendChild(node("pre", "args", s.arguments));
    if (s.kind === "tool_use") {
      if (s.result == null) li.appendChild(node("p", "muted", "no result recorded"));
      else if (s.result_folded) li.appendChild(folded("output: " + plural(s.result_lines, "line") + " (folded)", "output", s.result, null));
      else li.appendChild(node("pre", "output", s.result));
    }
    if (s.subagent) {  // its steps under ids <prefix><n>-<m>
      var sub = s.subagent, box = node("details", "subagent");
      box.setAttribute("id", prefix + s.number + "-sub");
      box.appendChild(node("summary", null, "subagent " + sub.label + ": " + plural(sub.steps.length, "step")));
      (sub.notices || []).forEach(function (n) { box.appendChild(node("p", "notice", n)); });
      var list = node("ol", "steps nested");
      list.appendChild(stepItems(sub.steps, prefix + s.number + "-"));
      box.appendChild(list);
      li.appendChild(box);
    }
    return li;
  }

  function stepItems(steps, prefix) {
    var items = document.createDocumentFragment();
    steps.forEach(function (s) { items.appendChild(stepItem(s, prefix)); });
    return items;
  }

  // The subagents a trajectory's tool calls started, from the page's subagents data (agentrig/view/subagents.py):
  // each found by its key (001-helper, 001-helper/002-checker) and read with the trajectory's rules.
  function nesting(T, subagents, key, depth) {
    return {subagent: function (metadata) {
      var label = T.subagentLabel(metadata);
      var inner = label && (key ? key + "/" + label : label);
      var entry = inner && Object.prototype.hasOwnProperty.call(subagents, inner) ? subagents[inner] : null;
      if (!entry) return null;
      if (entry.deep) return {label: label, steps: [], notices: entry.notices || []};
      var read = T.read(entry.text || "", entry.bad), notice = T.notice(entry.path, read.unreadable);
      return {label: label, steps: T.views(read.steps, nesting(T, subagents, inner, depth + 1), false).views,
              notices: (entry.notices || []).concat(notice ? [notice] : [])};
    }};
  }

  var trajectory = null;  // the page's own trajectory, read: its model calls' series and time for the plots

  // A trajectory element's lines: in it (an earlier try's), or in its problem run's shard, which the page loads
  // (a checkpoint's own: agentrig/view/pages.py); {text, bad, path, missing: a notice when the shard is not there}.
  function linesOf(T, el) {
    if (!el.dataset.shard) {
      return {text: el.textContent, bad: el.dataset.bad ? JSON.parse(el.dataset.bad) : [], path: el.dataset.path || ""};
    }
    var shard = T.shard(el.dataset.shard), found = null;
    (shard ? shard.checkpoints : []).forEach(function (c) { if (c.name === el.dataset.checkpoint) found = c; });
    if (!found) return {text: "", bad: [], path: "", missing: "the trajectory's data could not be read (search/" + el.dataset.shard + ".js)"};
    return {text: found.text || "", bad: found.bad || [], path: found.path || ""};
  }

  // The page's trajectory (and its earlier tries'): each <script class="trajectory-data"> inside an <ol class="steps">
  // is read (trajectory.js) and becomes the <li> of each of its steps, in place.
  // What a trajectory element holds, read: every step's view (and the model calls' series, model and tool time), the
  // steps read, the number shown (an earlier try's first `limit`), its system prompt and its notice.
  function trajectoryOf(el) {
    var T = window.agentrigTrajectory, main = el.parentNode.id === "steps", limit = el.dataset.limit ? +el.dataset.limit : null;
    var sibling = el.nextElementSibling, subagents = {};
    if (sibling && sibling.classList.contains("subagents-data")) subagents = JSON.parse(sibling.textContent);
    var lines = linesOf(T, el), read = T.read(lines.text, lines.bad);
    var steps = limit != null ? read.steps.slice(0, limit) : read.steps;
    var made = T.views(steps, main ? nesting(T, subagents, "", 0) : null, true);
    made.main = main; made.count = read.steps.length; made.shown = steps.length; made.system = T.systemPrompt(read.steps);
    made.notice = lines.missing || T.notice(lines.path, read.unreadable);
    return made;
  }

  // The page's trajectory (and its earlier tries'): each <script class="trajectory-data"> inside an <ol class="steps">
  // is read (trajectory.js) and becomes the <li> of each of its steps, in place.
  function drawSteps() {
    if (!window.agentrigTrajectory) return;
    Array.prototype.forEach.call(document.querySelectorAll("ol.steps > script.trajectory-data"), function (el) {
      if (el.dataset.drawn) return;
      var made = trajectoryOf(el), views = made.views, count = made.count;
      if (el.dataset.from) views = views.slice(+el.dataset.from - 1, +el.dataset.to);
      el.parentNode.insertBefore(stepItems(views, el.dataset.prefix || "step-"), el);
      el.dataset.drawn = "1";
      if (!made.main) {  // an earlier try: how many entries it has, how many are shown
        var summary = el.closest("details") && el.closest("details").querySelector(".try-count");
        if (summary) summary.textContent = entries(count) + (count > made.shown ? ", the first " + made.shown + " shown" : "");
        return;
      }
      trajectory = made;
      var counter = document.getElementById("trajectory-count");
      if (counter) counter.textContent = entries(count);
      var none = document.getElementById("no-steps");
      if (none) none.hidden = count > 0;
      var notices = document.getElementById("trajectory-notices");
      if (made.notice && notices) notices.appendChild(node("p", "notice", made.notice));
      var card = document.getElementById("system-prompt");
      if (made.system != null && card) {
        card.querySelector(".count").textContent = window.agentrigTrajectory.length(made.system) + " characters, as the first model call sent it";
        card.querySelector("pre").textContent = made.system;
        card.hidden = false;
      }
    });
  }

  function isLive() { return document.body.dataset.live === "1"; }

  function draw() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    (window.agentrigDraw || []).forEach(function (f) { f(); });  // other parts' plots (quality.js)
    var d = data();
    if (!d) return;
    if (d.pass_rate) {
      var runs = function (values, kind, scale) {
        return values.map(function (v, i) { return {label: d.labels[i], title: d.runs[i], values: v, kind: kind, scale: scale}; });
      };
      var none = isLive() ? "no checkpoint finished yet" : "no checkpoint finished";
      line(document.getElementById("plot-pass-rate"), d.x, runs(d.pass_rate, "pct", "pct"),
           {xLabel: "checkpoint", empty: none, scales: [{name: "pct", label: "% passed", kind: "pct"}]});
      line(document.getElementById("plot-cost"), d.x, runs(d.cost, "usd", "usd"),
           {xLabel: "checkpoint", empty: none, scales: [{name: "usd", label: "USD", kind: "usd"}]});
      bars(document.getElementById("plot-time"), d.time.map(function (t, i) { return {label: d.labels[i], title: d.runs[i], parts: t}; }));
    }
    if (d.timing !== undefined) {  // a checkpoint's page: its plots come from its trajectory, read by drawSteps
      var T = window.agentrigTrajectory, read = trajectory || {calls: {x: [], input: [], output: [], cumulative: []}, model_time: 0, tool_time: 0};
      var split = T ? T.timeSplit(d.timing, read.model_time, read.tool_time) : null;
      d.calls = read.calls;
      d.time = split && split.parts;
      d.time_note = split && split.note;
    }
    if (d.calls) {
      line(document.getElementById("plot-calls"), d.calls.x, [
        {label: "input tokens", values: d.calls.input, scale: "tok", kind: "num"},
        {label: "output tokens", values: d.calls.output, scale: "tok", kind: "num", color: "#16a34a"},
        {label: "cost so far", values: d.calls.cumulative, scale: "usd", kind: "usd", color: "#ea580c"},
      ], {xLabel: "model call", empty: isLive() ? "no model call yet" : "no model call recorded",
          scales: [{name: "tok", label: "tokens", kind: "num"}, {name: "usd", label: "USD", kind: "usd"}]});
      var el = document.getElementById("plot-time");
      if (d.time) bars(el, [{label: "this checkpoint", parts: d.time, note: d.time_note}]);
      else if (el) el.textContent = isLive() ? "not finished yet" : "no time recorded (the checkpoint did not finish)";
    }
  }

  // A run in progress: its elapsed time counts on in the page (served reports only).
  function clocks() {
    if (!isLive() || location.protocol.indexOf("http") !== 0) return;
    var timer = setInterval(function () {
      if (!isLive()) { clearInterval(timer); return; }
      Array.prototype.forEach.call(document.querySelectorAll(".clock[data-since]"), function (el) {
        el.textContent = (Date.now() / 1000 - parseFloat(el.dataset.since)).toFixed(1) + "s";
      });
    }, 1000);
  }

  // The results table, built from its data: the first rows at once (the first screen), the rest in slices
  // after it, so that a run of 10,000 checkpoints shows its first screen without waiting for its last row.
  var FIRST_ROWS = 200, SLICE_ROWS = 1000, CHUNK_ROWS = 50, building = 0;

  function resultCell(c, root) {
    var td = document.createElement("td");
    if (!c) { td.className = "missing"; td.textContent = "—"; return td; }
    var status = document.createElement("span");
    status.className = "status st-" + c[0]; status.title = c[3] || "";
    if (c[1]) {
      var a = document.createElement("a"); a.href = root + c[1]; a.textContent = c[0]; status.appendChild(a);
    } else status.textContent = c[0];
    var metrics = document.createElement("span"); metrics.className = "metrics"; metrics.textContent = c[2];
    td.appendChild(status); td.appendChild(document.createTextNode(" ")); td.appendChild(metrics);
    return td;
  }

  function results() {
    var table = document.getElementById("results"), el = document.getElementById("results-data");
    if (!table || !el) return;
    var rows = JSON.parse(el.textContent), root = table.dataset.root || "", at = 0, run = ++building;
    function add(count) {
      var end = Math.min(rows.length, at + count);
      while (at < end) {
        var body = document.createElement("tbody"); body.className = "chunk";
        for (var k = 0; k < CHUNK_ROWS && at < end; k++, at++) {
          var r = rows[at], tr = document.createElement("tr");
          [r[0], r[1]].forEach(function (text) { var td = document.createElement("td"); td.textContent = text; tr.appendChild(td); });
          r[2].forEach(function (c) { tr.appendChild(resultCell(c, root)); });
          body.appendChild(tr);
        }
        table.appendChild(body);
        applyFilter(body);
      }
    }
    add(FIRST_ROWS);
    (function rest() {
      if (at >= rows.length || run !== building) return;
      setTimeout(function () { if (run === building) { add(SLICE_ROWS); rest(); } }, 0);
    })();
  }

  function filterWords() {
    var input = document.getElementById("filter");
    return input ? input.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
  }

  function applyFilter(scope) {
    var words = filterWords();
    Array.prototype.forEach.call(scope.querySelectorAll("tr"), function (tr) {
      if (tr.parentNode.tagName === "THEAD") return;
      var text = tr.textContent.toLowerCase();
      tr.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
    });
  }

  function filter() {
    var input = document.getElementById("filter");
    var table = document.getElementById("results");
    if (!input || !table) return;
    input.addEventListener("input", function () { applyFilter(table); });
  }

  // A live checkpoint page's trajectory grows: its shard is loaded again (a new address: the browser's copy is not
  // used) before the steps are drawn again; `then` runs once it is there, or could not be loaded.
  function reloadShard(version, then) {
    var old = document.querySelector("script.trajectory-shard");
    if (!old) { then(); return; }
    var el = document.createElement("script");
    el.className = "trajectory-shard";
    el.src = old.src.split("?")[0] + "?v=" + encodeURIComponent(version);
    el.onload = el.onerror = function () { old.remove(); then(); };
    document.body.appendChild(el);
  }

  function live() {
    if (document.body.dataset.live !== "1" || location.protocol.indexOf("http") !== 0) return;
    var busy = false;
    var timer = setInterval(function () {
      if (busy) return;
      busy = true;
      fetch(location.href, {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main && fresh.dataset.version !== main.dataset.version) {
          var open = Array.prototype.map.call(main.querySelectorAll("details[open]"), function (d) { return d.closest("[id]") && d.closest("[id]").id; });
          var y = window.scrollY;
          main.innerHTML = fresh.innerHTML;
          main.dataset.version = fresh.dataset.version;
          reloadShard(fresh.dataset.version, function () {
            drawSteps();
            open.forEach(function (id) { var el = id && document.getElementById(id); var d = el && el.querySelector("details"); if (d) d.open = true; });
            draw(); results(); filter();
            window.scrollTo(0, y);
          });
        }
        if (doc.body.dataset.live !== "1") {
          clearInterval(timer);
          document.body.dataset.live = "0";
          var badge = document.getElementById("live-badge");
          if (badge) badge.hidden = true;
        }
      }).catch(function () { /* the server went away: keep the page as it is */ })
        .then(function () { busy = false; });
    }, 1500);
  }

  window.agentrigPlots = {line: line, colors: COLORS, draw: draw, trajectoryOf: trajectoryOf};
  drawSteps();
  draw();
  results();
  // the first screen is drawn (cards, plots, the first rows): what bench/bench_view.py times
  if (window.performance && performance.mark) performance.mark("agentrig:first-screen");
  filter();
  live();
  clocks();
  var resizeTimer = null;
  window.addEventListener("resize", function () { clearTimeout(resizeTimer); resizeTimer = setTimeout(draw, 200); });
})();

// A link to an earlier try (#try-N) opens that try's trajectory.
(function () {
  function openTry() {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS" && target.classList.contains("try")) {
      target.open = true;
      target.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTry);
  openTry();
})();
