// agentrig report: the erosion plots of code quality (each figure across checkpoints, one line per run),
// drawn with the report's own plotting code (app.js: window.agentrigPlots) whenever it draws its plots
// (every page loads this file: a live page may gain the plots when a run in progress measures its first checkpoint).
(function () {
  "use strict";
  function draw() {
    var el = document.getElementById("quality-data"), grid = document.getElementById("quality-plots");
    var plots = window.agentrigPlots;
    if (!el || !grid || !plots) return;
    var d = JSON.parse(el.textContent), select = document.getElementById("quality-problem");
    var name = select ? select.value : (d.problems[0] && d.problems[0].name);
    var problem = d.problems.filter(function (p) { return p.name === name; })[0];
    grid.textContent = "";
    if (!problem) return;
    grid.dataset.problem = problem.name;
    // every card first, then the plots: each is drawn as wide as its card is once the grid is full
    var charts = d.metrics.filter(function (m) { return problem.series[m.key]; }).map(function (m) {
      var card = document.createElement("div"); card.className = "card plot";
      var title = document.createElement("h3"); title.textContent = m.label; card.appendChild(title);
      var chart = document.createElement("div"); chart.className = "chart"; chart.id = "quality-plot-" + m.key;
      card.appendChild(chart); grid.appendChild(card);
      return [m, chart];
    });
    charts.forEach(function (item) {
      var m = item[0];
      plots.line(item[1], problem.x, problem.series[m.key].map(function (v, i) {
        var run = problem.runs[i];
        return {label: d.labels[run], title: d.titles[run], values: v, kind: "num", scale: "n",
                color: plots.colors[run % plots.colors.length]};
      }), {xLabel: "checkpoint", empty: "not measured", scales: [{name: "n", label: m.label, kind: "num"}]});
    });
  }
  (window.agentrigDraw = window.agentrigDraw || []).push(draw);
  if (window.agentrigPlots) draw();  // loaded after app.js drew the page's plots
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "quality-problem" && window.agentrigPlots) window.agentrigPlots.draw();
  });
})();
