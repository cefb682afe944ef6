// timeline.html's zoom and pan, along time only: the plot group is drawn in milliseconds and
// scaled here; labels and the axis are redrawn at each view so text never stretches. Embedded in
// every timeline.html at build time (checker/story/timeline_assets.hpp).
(function () {
  const svg = document.getElementById('chart');
  const plot = document.getElementById('plot');
  const axis = document.getElementById('axis');
  const faultLabels = document.getElementById('fault-labels');
  const left = +svg.dataset.left, width = +svg.dataset.width, end = +svg.dataset.end;
  let x0 = 0, x1 = end;
  function tickStep(span) {
    const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
    return 10 * p;
  }
  function render() {
    const k = width / Math.max(x1 - x0, 1e-6);
    plot.setAttribute('transform', 'translate(' + (left - x0 * k) + ',0) scale(' + k + ',1)');
    while (axis.firstChild) axis.removeChild(axis.firstChild);
    const step = tickStep(x1 - x0), ns = 'http://www.w3.org/2000/svg';
    for (let t = Math.ceil(x0 / step) * step; t <= x1; t += step) {
      const x = left + (t - x0) * k;
      const line = document.createElementNS(ns, 'line');
      line.setAttribute('x1', x); line.setAttribute('x2', x);
      line.setAttribute('y1', 14); line.setAttribute('y2', svg.getAttribute('height'));
      line.setAttribute('stroke', '#e4e4e4');
      axis.appendChild(line);
      const label = document.createElementNS(ns, 'text');
      label.setAttribute('x', x + 2); label.setAttribute('y', 12);
      label.setAttribute('font-size', '11');
      label.textContent = (t / 1000).toFixed(step < 1 ? 4 : step < 10 ? 3 : 2) + ' s';
      axis.appendChild(label);
    }
    for (const label of faultLabels.children) {
      label.setAttribute('x', left + (+label.dataset.t - x0) * k + 2);
      label.style.display = (+label.dataset.t >= x0 && +label.dataset.t <= x1) ? '' : 'none';
    }
    document.getElementById('view').textContent =
      (x0 / 1000).toFixed(3) + ' s to ' + (x1 / 1000).toFixed(3) + ' s';
  }
  function show(a, b) { x0 = Math.max(0, a); x1 = Math.min(end, Math.max(b, a + 0.001)); render(); }
  window.lockbenchShow = show;
  function zoomToIncident(n) {
    const band = document.getElementById('incident-' + n);
    if (!band) { show(0, end); return false; }
    const a = +band.getAttribute('x'), w = +band.getAttribute('width');
    const pad = Math.max(w * 0.15, 1);
    show(a - pad, a + w + pad);
    return true;
  }
  // The overlap fills the middle third: a 1 ms overlap inside an incident of seconds is seen at
  // once, not after zooming.
  function zoomToOverlap() {
    const band = document.getElementById('overlap-0');
    if (!band) return zoomToIncident(0);
    const a = +band.getAttribute('x'), w = +band.getAttribute('width');
    show(a - w, a + 2 * w);
    return true;
  }
  document.getElementById('whole').onclick = () => show(0, end);
  document.getElementById('first').onclick = () => zoomToIncident(0);
  document.getElementById('overlap').onclick = () => zoomToOverlap();
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'o') zoomToOverlap();
    else if (e.key === 'i') zoomToIncident(0);
    else if (e.key === 'w') show(0, end);
  });
  document.getElementById('zin').onclick = () => { const c = (x0 + x1) / 2, h = (x1 - x0) / 4; show(c - h, c + h); };
  document.getElementById('zout').onclick = () => { const c = (x0 + x1) / 2, h = (x1 - x0); show(c - h, c + h); };
  svg.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const t = x0 + (e.clientX - r.left - left) / width * (x1 - x0);
    const f = e.deltaY < 0 ? 0.8 : 1.25;
    show(t - (t - x0) * f, t + (x1 - t) * f);
  }, { passive: false });
  let drag = null;
  svg.addEventListener('mousedown', (e) => { drag = { x: e.clientX, a: x0, b: x1 }; });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('mousemove', (e) => {
    if (!drag) return;
    const dt = (e.clientX - drag.x) / width * (drag.b - drag.a);
    show(drag.a - dt, drag.b - dt);
  });
  // Opens at the story: the first overlap of the first incident, when there is one.
  const zoomed = zoomToOverlap();
  // For tests and for people: are the first incident and its first overlap on screen, with a
  // size?
  function onScreen(id, name) {
    const band = document.getElementById(id);
    if (!band) { document.body.dataset[name + 'Visible'] = 'none'; return; }
    const r = band.getBoundingClientRect();
    const visible = zoomed && r.width > 2 && r.height > 2 && r.right > 0 &&
                    r.left < window.innerWidth && r.bottom > 0 && r.top < window.innerHeight;
    document.body.dataset[name + 'Visible'] = visible ? 'true' : 'false';
    document.body.dataset[name + 'Box'] = [r.left, r.top, r.width, r.height].map(Math.round).join(',');
  }
  onScreen('incident-0', 'incident');
  onScreen('overlap-0', 'overlap');
  const plotBox = svg.getBoundingClientRect();
  document.body.dataset.plotBox = [plotBox.left + left, plotBox.top, width, plotBox.height].map(Math.round).join(',');
})();
