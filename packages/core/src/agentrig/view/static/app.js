// agentrig report: plots (uPlot, shipped beside this file), the results filter, and live refresh
// of a run in progress (served reports only: a page opened from disk cannot re-read itself).
(function () {
  "use strict";
  var COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];
  var SEGMENTS = {"model": "#2563eb", "tools": "#16a34a", "other agent": "#94a3b8", "agent": "#2563eb", "evaluation": "#ea580c"};
  var charts = [];

  function data() {
    var el = document.getElementById("plot-data");
    return el ? JSON.parse(el.textContent) : null;
  }

  function fmtUsd(v) { return v == null ? "" : "$" + v.toFixed(v < 0.01 ? 5 : 3); }
  function fmtNum(v) { return v == null ? "" : (Math.abs(v) >= 1000 ? (v / 1000).toFixed(1) + "k" : String(v)); }

  function line(el, x, series, opts) {
    if (!el || typeof uPlot === "undefined" || !x.length) {
      if (el) { el.textContent = "no data yet"; el.className += " empty"; }
      return;
    }
    var width = Math.max(280, el.clientWidth || 480);
    var scales = {x: {time: false}};
    var axes = [{label: opts.xLabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
                 values: function (u, vals) { return vals.map(function (v) { return String(v); }); }}];
    (opts.scales || [{name: "y", label: opts.yLabel, fmt: opts.fmt}]).forEach(function (s, i) {
      scales[s.name] = {auto: true};
      axes.push({scale: s.name, label: s.label, side: i === 0 ? 3 : 1, grid: {show: i === 0},
                 values: function (u, vals) { return vals.map(s.fmt || fmtNum); }, size: 60});
    });
    var u = new uPlot({
      width: width, height: 220,
      scales: scales, axes: axes,
      series: [{label: opts.xLabel}].concat(series.map(function (s, i) {
        return {label: s.label, scale: s.scale || "y", stroke: s.color || COLORS[i % COLORS.length], width: 2,
                spanGaps: true, points: {show: x.length <= 60}, value: function (u, v) { return (s.fmt || fmtNum)(v); }};
      })),
    }, [x].concat(series.map(function (s) { return s.values; })), el);
    charts.push(u);
  }

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
      var bar = document.createElement("div"); bar.className = "bar";
      Object.keys(r.parts).forEach(function (k) {
        var v = r.parts[k] || 0;
        if (!max || v <= 0) return;
        var seg = document.createElement("span");
        seg.className = "seg"; seg.style.width = (100 * v / max) + "%"; seg.style.background = SEGMENTS[k] || "#64748b";
        seg.title = k + ": " + v.toFixed(2) + "s";
        bar.appendChild(seg);
      });
      var legend = document.createElement("span"); legend.className = "bar-legend";
      legend.textContent = Object.keys(r.parts).map(function (k) { return k + " " + (r.parts[k] || 0).toFixed(1) + "s"; }).join(" · ");
      row.appendChild(label); row.appendChild(bar); row.appendChild(legend);
      el.appendChild(row);
    });
  }

  function draw() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var d = data();
    if (!d) return;
    if (d.pass_rate) {
      line(document.getElementById("plot-pass-rate"), d.x, d.pass_rate.map(function (v, i) {
        return {label: d.runs[i], values: v, fmt: function (x) { return x == null ? "" : x + "%"; }};
      }), {xLabel: "checkpoint", yLabel: "% passed"});
      line(document.getElementById("plot-cost"), d.x, d.cost.map(function (v, i) {
        return {label: d.runs[i], values: v, fmt: fmtUsd};
      }), {xLabel: "checkpoint", yLabel: "USD", fmt: fmtUsd});
      bars(document.getElementById("plot-time"), d.time.map(function (t, i) { return {label: d.runs[i], parts: t}; }));
    }
    if (d.calls) {
      line(document.getElementById("plot-calls"), d.calls.x, [
        {label: "input tokens", values: d.calls.input, scale: "tok"},
        {label: "output tokens", values: d.calls.output, scale: "tok", color: "#16a34a"},
        {label: "cost so far", values: d.calls.cumulative, scale: "usd", fmt: fmtUsd, color: "#ea580c"},
      ], {xLabel: "model call", scales: [{name: "tok", label: "tokens", fmt: fmtNum}, {name: "usd", label: "USD", fmt: fmtUsd}]});
      if (d.time) bars(document.getElementById("plot-time"), [{label: "this checkpoint", parts: d.time}]);
      else { var el = document.getElementById("plot-time"); if (el) el.textContent = "not finished yet"; }
    }
  }

  function filter() {
    var input = document.getElementById("filter");
    var table = document.getElementById("results");
    if (!input || !table) return;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr) {
        var text = tr.textContent.toLowerCase();
        tr.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    });
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
          open.forEach(function (id) { var el = id && document.getElementById(id); var d = el && el.querySelector("details"); if (d) d.open = true; });
          draw(); filter();
          window.scrollTo(0, y);
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

  draw();
  filter();
  live();
  var resizeTimer = null;
  window.addEventListener("resize", function () { clearTimeout(resizeTimer); resizeTimer = setTimeout(draw, 200); });
})();
