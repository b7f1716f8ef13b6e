// Draws the history charts of a benchhost report as they come near the screen (every one at once to print,
// or when the page is opened with #all). Each chart's data-chart carries its panels as a few hundred characters
// instead of a few kilobytes of SVG: Chromium read the drawn SVG of 1M records (8 MB) in 3.3 s.
// The layout is html_series.rs's: one panel per metric, the axis dates under the last, change points as lines.
(() => {
  const DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
  const LEFT = 120, RIGHT = 630, PANEL = 56, AXIS = 18;
  const esc = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  // `text` as numbers of `width` base-64 digits each.
  const numbers = (text, width) => {
    const out = [];
    for (let i = 0; i < text.length; i += width) {
      let n = 0;
      for (let j = 0; j < width; j++) n = n * 64 + DIGITS.indexOf(text[i + j]);
      out.push(n);
    }
    return out;
  };
  const draw = (svg) => {
    if (!svg.dataset.chart) return;
    const chart = JSON.parse(svg.dataset.chart);
    delete svg.dataset.chart;
    let out = "";
    chart.panels.forEach(([name, label, range, ys, xs], i) => {
      const top = PANEL * i;
      const x = numbers(xs || chart.x, 2).map((v) => LEFT + v);
      // Per span: its newest, lowest and highest value, and the newest's CI95 when the records have one, as
      // pixels below the panel's top (none: a flat line).
      const per = ys && ys.length === 5 * x.length ? 5 : 3;
      const y = ys ? numbers(ys, 1).map((v) => top + 6 + v) : x.flatMap(() => Array(per).fill(top + PANEL / 2));
      const spans = [...x.keys()];
      const at = (k, which) => `${x[k]},${y[per * k + which]}`;
      const band = spans.map((k) => at(k, 2)).concat([...spans].reverse().map((k) => at(k, 1)));
      const line = spans.map((k) => at(k, 0));
      out += `<text x="4" y="${top + 20}">${esc(name)}</text>` +
        `<text x="4" y="${top + 36}" fill="#555">${esc(label)}</text>` +
        `<line x1="${LEFT}" y1="${top + PANEL - 2}" x2="${RIGHT}" y2="${top + PANEL - 2}" stroke="#ddd"/>` +
        `<polygon points="${band.join(" ")}" fill="#4269d0" fill-opacity="0.15"/>` +
        `<polyline points="${line.join(" ")}" fill="none" stroke="#4269d0" stroke-width="1.5">` +
        `<title>${esc(name)}: ${esc(range)}</title></polyline>`;
      // Each span's newest value as a dot, and its CI95 as a whisker.
      spans.forEach((k) => {
        if (per === 5) {
          out += `<line class="ci" x1="${x[k]}" x2="${x[k]}" y1="${y[5 * k + 3]}" y2="${y[5 * k + 4]}" stroke="#4269d0"/>`;
        }
        out += `<circle cx="${x[k]}" cy="${y[per * k]}" r="1.8" fill="#4269d0"/>`;
      });
    });
    // Change points: a dashed line on their metric's panel, red for a regression, green for an improvement,
    // blue for a step an acknowledgement accepted.
    (chart.marks || []).forEach(([i, v, text, bad, accepted]) => {
      const top = PANEL * i, x = LEFT + v, colour = accepted ? "#1f77b4" : bad ? "#d62728" : "#2ca02c";
      out += `<line class="${accepted ? "change accepted" : "change"}" x1="${x}" y1="${top + 2}" x2="${x}" y2="${top + PANEL - 2}" stroke="${colour}" ` +
        `stroke-width="1.5" stroke-dasharray="3 2"><title>${esc(text)}</title></line>` +
        `<text x="${x + 3}" y="${top + 10}" fill="${colour}">${esc(text.split(" ")[0])}</text>`;
    });
    const bottom = PANEL * chart.panels.length + AXIS - 4;
    out += `<text x="${LEFT}" y="${bottom}">${esc(chart.from)}</text>` +
      `<text x="${RIGHT}" y="${bottom}" text-anchor="end">${esc(chart.to)}</text>`;
    svg.insertAdjacentHTML("beforeend", out);
  };
  const charts = document.querySelectorAll("svg[data-chart]");
  const all = () => charts.forEach(draw);
  addEventListener("beforeprint", all);
  if (location.hash === "#all" || !("IntersectionObserver" in window)) return all();
  const near = new IntersectionObserver((seen) => seen.forEach((entry) => {
    if (entry.isIntersecting) {
      near.unobserve(entry.target);
      draw(entry.target);
    }
  }), { rootMargin: "600px" });
  charts.forEach((svg) => near.observe(svg));
})();
