/**
 * The replay report's script, inlined into the page. It reads the report data from the
 * `application/json` element, draws the chart (SVG) and the prompt-cache strip, and wires the
 * tooltips, the compaction markers and the compaction list together. Every piece of
 * conversation text goes in through `textContent` or `setAttribute`, never as markup.
 *
 * Plain ES2017 in a string (no bundler, no DOM types in this project): the browser test in
 * test/report/ is what checks it.
 */
export const REPORT_SCRIPT = String.raw`(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var source = document.getElementById('report-data');
  var chart = document.getElementById('chart');
  if (!source || !chart) return;
  var data = JSON.parse(source.textContent || '{}');
  var turns = data.turns || [];
  var comps = data.compactions || [];
  var previews = {};
  (data.messages || []).forEach(function (m) { previews[m.seq] = m; });
  var tooltip = document.getElementById('tooltip');
  var scaleButtons = document.querySelectorAll('[data-scale]');
  var state = { scale: 'budget', selected: null, width: 0, geometry: null };

  function svg(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) if (attrs[key] !== undefined) node.setAttribute(key, String(attrs[key]));
    if (parent) parent.appendChild(node);
    return node;
  }
  function html(tag, className, text, parent) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function fmtInt(n) { return Math.round(n).toLocaleString('en-US'); }
  function fmtShort(n) {
    var abs = Math.abs(n);
    if (abs >= 1e6) return trim((n / 1e6).toFixed(abs >= 1e7 ? 0 : 1)) + 'M';
    if (abs >= 1e3) return trim((n / 1e3).toFixed(abs >= 1e4 ? 0 : 1)) + 'k';
    return String(Math.round(n));
  }
  function trim(s) { return s.replace(/\.0$/, ''); }
  function pct(x) { return (x >= 0.995 || x < 0.1 ? Math.round(x * 100) : Math.round(x * 1000) / 10) + '%'; }
  function max(list, pick) {
    var m = 0;
    for (var i = 0; i < list.length; i++) { var v = pick(list[i]); if (v !== null && v > m) m = v; }
    return m;
  }
  function niceTicks(top, count) {
    if (!(top > 0)) top = 1;
    var raw = top / count;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 2.5, 5, 10];
    var step = power * 10;
    for (var i = 0; i < steps.length; i++) if (power * steps[i] >= raw) { step = power * steps[i]; break; }
    step = Math.max(1, step);
    var ticks = [];
    for (var v = 0; v < top + step * 0.999; v += step) ticks.push(v);
    return ticks;
  }
  function turnTicks(n, room) {
    var want = Math.max(2, Math.floor(room / 80));
    if (n <= want) { var all = []; for (var i = 1; i <= n; i++) all.push(i); return all; }
    var step = niceTicks(n, want)[1];
    var ticks = [1];
    for (var t = step; t <= n; t += step) if (t - ticks[ticks.length - 1] >= step * 0.5) ticks.push(t);
    return ticks;
  }

  var maxStored = max(turns, function (t) { return t.storedTokens; });
  // A view that jumped far over the budget before its compaction (a huge tool result) is drawn
  // clipped at the top rather than squashing the budget's scale.
  var fitTop = Math.max(
    max(turns, function (t) { return t.budget; }),
    max(turns, function (t) { return t.sentTokens; })
  ) * 1.08;
  var canZoom = maxStored > fitTop;
  state.scale = maxStored > fitTop * 2.5 ? 'budget' : 'all';

  function badgeRows(xs) {
    var lasts = [];
    return xs.map(function (x) {
      for (var r = 0; r < 3; r++) if (lasts[r] === undefined || x - lasts[r] >= 22) { lasts[r] = x; return r; }
      lasts[0] = x;
      return 0;
    });
  }

  function render() {
    var width = Math.max(360, Math.floor(chart.clientWidth));
    state.width = width;
    chart.textContent = '';
    if (turns.length === 0) {
      html('p', 'empty', 'No model calls to replay: the conversation has no assistant message to answer.', chart);
      return;
    }
    var narrow = width < 640;
    var n = turns.length;
    var ml = 56, mr = 14;
    var pw = width - ml - mr;
    var xOf = function (i) { return n === 1 ? ml + pw / 2 : ml + (i / (n - 1)) * pw; };
    var index = {};
    turns.forEach(function (t, i) { index[t.turn] = i; });
    var compX = comps.map(function (c) { return xOf(index[c.turn] === undefined ? 0 : index[c.turn]); });
    // Too many compactions for numbered badges: small dots on one row, numbers in the tooltips.
    var dense = comps.length > (pw / 22) * 1.5;
    var rows = dense ? compX.map(function () { return 0; }) : badgeRows(compX);
    var rowCount = comps.length === 0 ? 0 : Math.max.apply(null, rows) + 1;
    var mt = 14 + rowCount * 22;
    var ph = narrow ? 220 : 300;
    var axisY = mt + ph;
    var stripY = axisY + 54, stripH = 14;
    var height = stripY + stripH + 4;
    var top = state.scale === 'all' ? Math.max(fitTop, maxStored * 1.04) : fitTop;
    var yTicks = niceTicks(top, narrow ? 4 : 5);
    var yMax = yTicks[yTicks.length - 1];
    var yOf = function (v) { return axisY - (v / yMax) * ph; };

    var root = svg('svg', {
      viewBox: '0 0 ' + width + ' ' + height, width: width, height: height, role: 'img',
      'aria-label': 'Tokens stored and sent per model call, against the budget, with ' + comps.length + ' compactions marked',
    });
    var defs = svg('defs', {}, root);
    var clip = svg('clipPath', { id: 'plot-clip' }, defs);
    svg('rect', { x: ml - 2, y: mt - 1, width: pw + 4, height: ph + 1 }, clip);

    var grid = svg('g', { class: 'grid' }, root);
    var axis = svg('g', { class: 'axis' }, root);
    yTicks.forEach(function (v) {
      var y = yOf(v);
      svg('line', { x1: ml, x2: ml + pw, y1: y, y2: y }, grid);
      svg('text', { x: ml - 8, y: y, 'text-anchor': 'end', 'dominant-baseline': 'central' }, axis).textContent = fmtShort(v);
    });
    svg('line', { x1: ml, x2: ml + pw, y1: axisY, y2: axisY }, axis);
    turnTicks(n, pw).forEach(function (t) {
      var x = xOf(t - 1);
      svg('line', { x1: x, x2: x, y1: axisY, y2: axisY + 4 }, axis);
      svg('text', { x: x, y: axisY + 17, 'text-anchor': 'middle' }, axis).textContent = fmtInt(t);
    });
    svg('text', { class: 'axis-title', x: ml + pw / 2, y: axisY + 35, 'text-anchor': 'middle' }, root).textContent =
      'Model call (turn)';
    svg('text', {
      class: 'axis-title', x: 0, y: 0, 'text-anchor': 'middle',
      transform: 'translate(13 ' + (mt + ph / 2) + ') rotate(-90)',
    }, root).textContent = 'Tokens';

    var plot = svg('g', { 'clip-path': 'url(#plot-clip)' }, root);
    var storedLine = '';
    turns.forEach(function (t, i) { storedLine += (i ? 'L' : 'M') + xOf(i).toFixed(1) + ' ' + yOf(t.storedTokens).toFixed(1); });
    svg('path', { class: 'area-stored', d: storedLine + 'L' + xOf(n - 1).toFixed(1) + ' ' + axisY + 'L' + xOf(0).toFixed(1) + ' ' + axisY + 'Z' }, plot);
    svg('path', { class: 'line-stored', d: n === 1 ? 'M' + (ml) + ' ' + yOf(turns[0].storedTokens) + 'H' + (ml + pw) : storedLine }, plot);

    var sentLine = '', sentArea = '', runStart = -1;
    function closeRun(end) {
      if (runStart < 0) return;
      sentArea += 'L' + xOf(end).toFixed(1) + ' ' + axisY + 'L' + xOf(runStart).toFixed(1) + ' ' + axisY + 'Z';
      runStart = -1;
    }
    turns.forEach(function (t, i) {
      if (t.sentTokens === null) { closeRun(i - 1); return; }
      var p = xOf(i).toFixed(1) + ' ' + yOf(t.sentTokens).toFixed(1);
      if (runStart < 0) { runStart = i; sentLine += 'M' + p; sentArea += 'M' + p; } else { sentLine += 'L' + p; sentArea += 'L' + p; }
    });
    closeRun(n - 1);
    svg('path', { class: 'area-sent', d: sentArea }, plot);
    svg('path', { class: 'line-sent', d: n === 1 && turns[0].sentTokens !== null ? 'M' + ml + ' ' + yOf(turns[0].sentTokens) + 'H' + (ml + pw) : sentLine }, plot);

    var refs = svg('g', { class: 'refs' }, root);
    [['budget', 'Budget'], ['trigger', 'Trigger'], ['target', 'Target']].forEach(function (ref, k) {
      var key = ref[0], d = '';
      turns.forEach(function (t, i) { d += (i ? 'L' : 'M') + xOf(i).toFixed(1) + ' ' + yOf(t[key]).toFixed(1); });
      if (n === 1) d = 'M' + ml + ' ' + yOf(turns[0][key]) + 'H' + (ml + pw);
      svg('path', { class: 'line-' + key, d: d }, refs);
      var first = turns[0];
      var label = ref[1] + ' ' + fmtInt(first[key]) + (key === 'budget' ? '' : ' (' + pct(first[key] / first.budget) + ')');
      svg('text', { class: 'ref-label ' + key, x: ml + 8 + k * (narrow ? 96 : 128), y: yOf(first[key]) - 5 }, refs).textContent = label;
    });

    var note = document.getElementById('chart-note');
    if (note) {
      note.hidden = !(maxStored > yMax);
      note.textContent = 'The stored history runs above this scale (' + fmtInt(turns[n - 1].storedTokens) +
        ' tokens at the end): choose \u201cWhole history\u201d to see all of it.';
    }

    turns.forEach(function (t, i) {
      if (t.overflow === undefined) return;
      var x = xOf(i), y = yOf(t.budget);
      var g = svg('g', { class: 'overflow' }, root);
      svg('path', { class: 'overflow-mark', d: 'M' + (x - 4) + ' ' + (y - 4) + 'L' + (x + 4) + ' ' + (y + 4) + 'M' + (x + 4) + ' ' + (y - 4) + 'L' + (x - 4) + ' ' + (y + 4) }, g);
    });

    var strip = svg('g', { class: 'strip' }, root);
    svg('text', { class: 'strip-label', x: ml - 8, y: stripY + stripH / 2 }, strip).textContent = 'Cache';
    var band = n === 1 ? pw : pw / (n - 1);
    var runFrom = 0;
    for (var i = 1; i <= n; i++) {
      // A run of one state is one band; each compaction its own (two may come on consecutive
      // turns when the new messages alone pass the room the first left).
      if (i < n && turns[i].prefix.state === turns[runFrom].prefix.state && turns[i].prefix.state !== 'compacted') continue;
      var x0 = Math.max(ml, xOf(runFrom) - band / 2), x1 = Math.min(ml + pw, xOf(i - 1) + band / 2);
      svg('rect', { class: turns[runFrom].prefix.state, x: x0.toFixed(2), y: stripY, width: Math.max(0.8, x1 - x0).toFixed(2), height: stripH, 'data-from': turns[runFrom].turn, 'data-to': turns[i - 1].turn }, strip);
      runFrom = i;
    }

    var hover = svg('g', { class: 'hover' }, root);
    var overlay = svg('rect', { class: 'overlay', x: ml, y: mt, width: pw, height: stripY + stripH - mt }, hover);
    var cross = svg('line', { class: 'crosshair', y1: mt, y2: stripY + stripH, visibility: 'hidden' }, hover);
    var dotStored = svg('circle', { class: 'dot-stored', r: 4, visibility: 'hidden' }, hover);
    var dotSent = svg('circle', { class: 'dot-sent', r: 4.5, visibility: 'hidden' }, hover);

    var markers = svg('g', { class: 'markers' }, root);
    comps.forEach(function (c, k) {
      var i = index[c.turn] === undefined ? 0 : index[c.turn];
      var x = xOf(i), by = dense ? 18 : 14 + rows[k] * 22;
      var r = c.receipt;
      var off = r.tokensBefore > yMax;
      var g = svg('g', {
        class: 'marker' + (state.selected === c.number ? ' selected' : ''), tabindex: 0, role: 'button',
        'data-number': c.number, 'data-turn': c.turn,
        'aria-label': 'Compaction ' + c.number + ' at call ' + c.turn + ': ' + fmtInt(r.tokensBefore) + ' to ' + fmtInt(r.tokensAfter) + ' tokens',
      }, markers);
      svg('line', { class: 'guide', x1: x, x2: x, y1: by + (dense ? 4 : 9), y2: axisY }, g);
      svg('line', { class: 'drop', x1: x, x2: x, y1: off ? mt : yOf(r.tokensBefore), y2: yOf(Math.min(r.tokensAfter, yMax)) }, g);
      if (off) svg('path', { class: 'before-off', d: 'M' + (x - 4.5) + ' ' + (mt + 6) + 'L' + x + ' ' + (mt + 1) + 'L' + (x + 4.5) + ' ' + (mt + 6) }, g);
      else svg('circle', { class: 'before', cx: x, cy: yOf(r.tokensBefore), r: 3.5 }, g);
      svg('rect', { class: 'hit', x: x - 7, y: by - 10, width: 14, height: axisY - by + 10 }, g);
      svg('circle', { class: 'badge', cx: x, cy: by, r: dense ? 4 : 9.5 }, g);
      if (!dense) svg('text', { class: 'badge-text', x: x, y: by + 0.5 }, g).textContent = String(c.number);
      g.addEventListener('click', function () { select(c.number, 'smooth'); });
      g.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(c.number, 'smooth'); }
      });
      g.addEventListener('pointerenter', function (e) { showTip(i, e); });
      g.addEventListener('pointermove', function (e) { showTip(i, e); });
      g.addEventListener('pointerleave', hideTip);
      g.addEventListener('focus', function () { showTip(i, null); });
      g.addEventListener('blur', hideTip);
    });

    function turnAt(e) {
      var box = root.getBoundingClientRect();
      var x = (e.clientX - box.left) * (width / box.width);
      var i = n === 1 ? 0 : Math.round(((x - ml) / pw) * (n - 1));
      return Math.max(0, Math.min(n - 1, i));
    }
    overlay.addEventListener('pointermove', function (e) { showTip(turnAt(e), e); });
    overlay.addEventListener('pointerleave', hideTip);
    overlay.addEventListener('click', function (e) {
      var t = turns[turnAt(e)];
      if (t.compactions.length > 0) select(t.compactions[0] + 1, 'smooth');
    });

    state.geometry = { root: root, xOf: xOf, yOf: yOf, cross: cross, dotStored: dotStored, dotSent: dotSent, width: width, mt: mt, yMax: yMax };
    chart.appendChild(root);
    if (tooltip) chart.appendChild(tooltip);
  }

  function row(parent, label, value, swatch) {
    var r = html('div', 'tt-row', undefined, parent);
    var l = html('span', '', undefined, r);
    if (swatch) html('i', 'sw ' + swatch, undefined, l);
    l.appendChild(document.createTextNode(label));
    html('span', '', value, r);
  }

  var PREFIX_TEXT = {
    kept: 'kept: starts with the previous request',
    compacted: 'reset by the compaction',
    broken: 'changed without a compaction',
    none: 'nothing to compare with',
  };

  function showTip(i, e) {
    var g = state.geometry;
    if (!g || !tooltip) return;
    var t = turns[i];
    var x = g.xOf(i);
    g.cross.setAttribute('x1', x); g.cross.setAttribute('x2', x); g.cross.setAttribute('visibility', 'visible');
    g.dotStored.setAttribute('cx', x); g.dotStored.setAttribute('cy', g.yOf(Math.min(t.storedTokens, g.yMax)));
    g.dotStored.setAttribute('visibility', t.storedTokens <= g.yMax ? 'visible' : 'hidden');
    if (t.sentTokens !== null) {
      g.dotSent.setAttribute('cx', x); g.dotSent.setAttribute('cy', g.yOf(t.sentTokens)); g.dotSent.setAttribute('visibility', 'visible');
    } else g.dotSent.setAttribute('visibility', 'hidden');

    tooltip.textContent = '';
    html('div', 'tt-title', 'Call ' + fmtInt(t.turn) + ' \u00b7 before message #' + t.beforeSeq, tooltip);
    if (t.sentTokens !== null) row(tooltip, 'Sent', fmtInt(t.sentTokens) + ' (' + pct(t.sentTokens / t.budget) + ')', 'sent');
    else row(tooltip, 'Sent', 'request failed', 'sent');
    row(tooltip, 'Stored', fmtInt(t.storedTokens), 'stored');
    row(tooltip, 'Messages', fmtInt(t.sentMessages) + ' of ' + fmtInt(t.storedMessages));
    row(tooltip, 'Budget', fmtInt(t.budget));
    row(tooltip, 'Cache prefix', t.prefix.state === 'none' ? '\u2014' : fmtInt(t.prefix.tokens) + ' tokens', t.prefix.state);
    html('div', 'tt-note', 'Prefix ' + PREFIX_TEXT[t.prefix.state], tooltip);
    t.compactions.forEach(function (k) {
      var c = comps[k];
      html('div', 'tt-note', 'Compaction #' + c.number + ' (' + c.receipt.reason + '): ' + fmtInt(c.receipt.tokensBefore) + ' \u2192 ' +
        fmtInt(c.receipt.tokensAfter) + ' tokens. Click for its receipt.', tooltip);
    });
    if (t.overflow !== undefined) html('div', 'tt-note', t.overflow, tooltip);
    tooltip.hidden = false;

    var box = chart.getBoundingClientRect();
    var scale = box.width / g.width;
    var px = e ? e.clientX - box.left : x * scale;
    var py = e ? e.clientY - box.top : g.mt * scale + 20;
    var tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    var left = px + 16;
    if (left + tw > box.width) left = px - tw - 16;
    var topPx = Math.max(0, Math.min(py - th / 2, box.height - th));
    tooltip.style.left = Math.max(0, left) + 'px';
    tooltip.style.top = topPx + 'px';
  }

  function hideTip() {
    var g = state.geometry;
    if (tooltip) tooltip.hidden = true;
    if (!g) return;
    g.cross.setAttribute('visibility', 'hidden');
    g.dotStored.setAttribute('visibility', 'hidden');
    g.dotSent.setAttribute('visibility', 'hidden');
  }

  /** reveal: false, 'smooth' (a click) or 'instant' (the page opened on #compaction-N). */
  function select(number, reveal) {
    state.selected = number;
    document.querySelectorAll('.marker').forEach(function (m) {
      m.classList.toggle('selected', m.getAttribute('data-number') === String(number));
    });
    document.querySelectorAll('details.compaction').forEach(function (d) {
      var mine = d.getAttribute('data-number') === String(number);
      d.classList.toggle('selected', mine);
      if (mine && !d.open) d.open = true;
    });
    document.body.setAttribute('data-selected', String(number));
    var id = '#compaction-' + number;
    if (location.hash !== id && history.replaceState) {
      try { history.replaceState(null, '', id); } catch (err) { /* file:// in some browsers */ }
    }
    if (reveal) {
      var target = document.getElementById('compaction-' + number);
      if (target) {
        target.scrollIntoView({ block: reveal === 'instant' ? 'start' : 'nearest', behavior: reveal === 'instant' ? 'auto' : 'smooth' });
        var summary = target.querySelector('summary');
        if (summary) summary.focus({ preventScroll: true });
      }
    }
  }

  document.querySelectorAll('details.compaction').forEach(function (d) {
    d.addEventListener('toggle', function () {
      var number = Number(d.getAttribute('data-number'));
      if (d.open && state.selected !== number) select(number, false);
    });
  });

  function syncScaleButtons() {
    scaleButtons.forEach(function (b) {
      b.setAttribute('aria-pressed', String(b.getAttribute('data-scale') === state.scale));
    });
  }
  var controls = document.getElementById('scale-controls');
  if (controls) controls.hidden = !canZoom;
  scaleButtons.forEach(function (b) {
    b.addEventListener('click', function () {
      state.scale = b.getAttribute('data-scale') === 'all' ? 'all' : 'budget';
      syncScaleButtons();
      render();
    });
  });
  syncScaleButtons();

  render();
  var fromHash = /^#compaction-(\d+)$/.exec(location.hash);
  if (fromHash && Number(fromHash[1]) >= 1 && Number(fromHash[1]) <= comps.length) select(Number(fromHash[1]), 'instant');

  var pending = 0;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = requestAnimationFrame(function () {
      pending = 0;
      if (Math.floor(chart.clientWidth) !== state.width) render();
    });
  });

  var body = document.body;
  body.setAttribute('data-turns', String(turns.length));
  body.setAttribute('data-markers', String(chart.querySelectorAll('.marker').length));
  body.setAttribute('data-strip-runs', String(chart.querySelectorAll('.strip rect').length));
  body.setAttribute('data-list-items', String(document.querySelectorAll('details.compaction').length));
  body.setAttribute('data-rendered', 'true');
})();
`;
