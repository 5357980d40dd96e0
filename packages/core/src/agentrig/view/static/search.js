// agentrig report: search within a trajectory (the checkpoint page's steps, in the page) and across runs
// (search.html, over the per-problem shards search/<run>/<problem>.js, loaded with <script> elements so
// that a report opened from disk works too). Every text is put in the page as text, never as HTML.
(function () {
  "use strict";
  var MAX_SHOWN = 500;
  var SNIPPET = 90;

  function words(query) { return query.toLowerCase().split(/\s+/).filter(Boolean); }
  function matches(text, ws) { for (var i = 0; i < ws.length; i++) if (text.indexOf(ws[i]) < 0) return false; return true; }

  // -- one trajectory: hide the steps that do not hold every word ------------------------------------
  function filterSteps(input) {
    var list = document.getElementById("steps");
    var count = document.getElementById("step-search-count");
    if (!list) return;
    var ws = words(input.value);
    var steps = list.querySelectorAll(":scope > li.step");
    var shown = 0;
    Array.prototype.forEach.call(steps, function (li) {
      var hit = !ws.length || matches(li.textContent.toLowerCase(), ws);
      li.hidden = !hit;
      li.classList.toggle("search-hit", hit && ws.length > 0);
      if (hit) shown++;
      if (hit && ws.length) {  // open the folded parts that hold a word
        Array.prototype.forEach.call(li.querySelectorAll("details"), function (d) {
          if (matches(d.textContent.toLowerCase(), ws.slice(0, 1))) d.open = true;
        });
      }
    });
    if (count) count.textContent = ws.length ? shown + " of " + steps.length + " steps on this page match" : "";
    var all = document.getElementById("step-search-all");
    if (all) all.href = all.href.replace(/&q=[^&]*$|$/, "&q=" + encodeURIComponent(input.value));
  }

  document.addEventListener("input", function (e) {  // delegated: a live page replaces its content
    if (e.target && e.target.id === "step-search") filterSteps(e.target);
  });

  // -- across runs: search.html -------------------------------------------------------------------------
  var loaded = {};      // shard src -> data, with each step's text lower-cased once
  var pending = null;   // the shard being loaded: {src, done}

  // A shard's checkpoints hold their trajectory lines as read (agentrig/view/search.py): each is read with the
  // checkpoint page's rules (trajectory.js, which receives every shard loaded), into [number, kind, text,
  // lower-cased text] per step.
  if (window.agentrigTrajectory) window.agentrigTrajectory.onShard(function (data) {
    if (!pending) return;
    var T = window.agentrigTrajectory;
    loaded[pending.src] = {run: data.run, problem: data.problem, per_page: data.per_page, checkpoints: data.checkpoints.map(function (c) {
      return {name: c.name, pages: c.pages, steps: T.read(c.text || "", c.bad).steps.map(function (step, i) {
        var text = T.searchText(step);
        return [i + 1, step.kind, text, text.toLowerCase()];
      })};
    })};
  });

  function load(src, done) {
    if (loaded[src]) { done(loaded[src]); return; }
    var el = document.createElement("script");
    pending = {src: src};
    el.src = src;
    el.onload = function () { el.remove(); pending = null; done(loaded[src] || null); };
    el.onerror = function () { el.remove(); pending = null; done(null); };
    document.head.appendChild(el);
  }

  function snippet(text, ws) {
    var lower = text.toLowerCase();
    var at = lower.indexOf(ws[0]);
    var start = Math.max(0, at - SNIPPET);
    var end = Math.min(text.length, at + ws[0].length + SNIPPET);
    var frag = document.createDocumentFragment();
    frag.appendChild(document.createTextNode((start > 0 ? "…" : "") + text.slice(start, at).replace(/\s+/g, " ")));
    var mark = document.createElement("mark");
    mark.textContent = text.slice(at, at + ws[0].length);
    frag.appendChild(mark);
    frag.appendChild(document.createTextNode(text.slice(at + ws[0].length, end).replace(/\s+/g, " ") + (end < text.length ? "…" : "")));
    return frag;
  }

  function result(data, c, s, ws) {
    var li = document.createElement("li");
    li.className = "search-result";
    var a = document.createElement("a");
    var page = c.pages[Math.min(c.pages.length - 1, Math.floor((s[0] - 1) / data.per_page))];
    a.href = page + "#step-" + s[0];
    a.textContent = "[" + data.run + "] " + data.problem + " / " + c.name + " · step " + s[0];
    var kind = document.createElement("span");
    kind.className = "badge";
    kind.textContent = s[1];
    var text = document.createElement("div");
    text.className = "snippet";
    text.appendChild(snippet(s[2], ws));
    li.appendChild(a); li.appendChild(document.createTextNode(" ")); li.appendChild(kind); li.appendChild(text);
    return li;
  }

  function params() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1).replace(/\+/g, " "));
    });
    return out;
  }

  function search(form, shards) {
    var q = form.querySelector("#search-q").value;
    var run = form.querySelector("#search-run").value;
    var problem = form.querySelector("#search-problem").value.trim();
    var checkpoint = form.querySelector("#search-checkpoint").value.trim();
    var list = document.getElementById("search-results");
    var status = document.getElementById("search-status");
    var ws = words(q);
    list.innerHTML = "";
    if (!ws.length) { status.textContent = "Type the words to find."; return; }
    var todo = shards.filter(function (s) {
      return (!run || String(s.run) === run) && (!problem || s.problem === problem);
    });
    var started = Date.now(), found = 0, done = 0, failed = 0;
    history.replaceState(null, "", "#" + [["q", q], ["run", run], ["problem", problem], ["checkpoint", checkpoint]]
      .filter(function (p) { return p[1]; }).map(function (p) { return p[0] + "=" + encodeURIComponent(p[1]); }).join("&"));
    function report(final) {
      status.textContent = (final ? "" : "searching… ") + found + " matching step" + (found === 1 ? "" : "s") +
        (found > MAX_SHOWN ? " (the first " + MAX_SHOWN + " shown)" : "") + " in " + done + " of " + todo.length +
        " problem runs" + (failed ? " (" + failed + " could not be read)" : "") + (final ? " · " + (Date.now() - started) + " ms" : "");
    }
    function next(i) {
      if (i >= todo.length) { report(true); return; }
      load(todo[i].src, function (data) {
        done++;
        if (!data) failed++;
        else data.checkpoints.forEach(function (c) {
          if (checkpoint && c.name !== checkpoint) return;
          c.steps.forEach(function (s) {
            if (!matches(s[3], ws)) return;
            found++;
            if (found <= MAX_SHOWN) list.appendChild(result(data, c, s, ws));
          });
        });
        report(false);
        next(i + 1);
      });
    }
    next(0);
  }

  function searchPage() {
    var form = document.getElementById("search-form");
    var el = document.getElementById("search-shards");
    if (!form || !el) return;
    var shards = JSON.parse(el.textContent);
    form.addEventListener("submit", function (e) { e.preventDefault(); search(form, shards); });
    function fromAddress() {  // a link (search.html#q=...&run=...) or the history says what to search
      var p = params();
      form.querySelector("#search-run").value = p.run || "";
      form.querySelector("#search-problem").value = p.problem || "";
      form.querySelector("#search-checkpoint").value = p.checkpoint || "";
      form.querySelector("#search-q").value = p.q || "";
      if (p.q) search(form, shards);
      else form.querySelector("#search-q").focus();
    }
    window.addEventListener("hashchange", fromAddress);
    fromAddress();
  }

  searchPage();
})();
