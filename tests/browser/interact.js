/*
 * interact.js - drives a `perfrec-analyze html` page like a person would,
 * inside headless Chromium (tests/browser/test_html_browser.sh inserts it
 * at the end of the page's body). Each check writes "name=ok" or
 * "name=FAIL(why)" into the root element's data-interact attribute, which
 * the test reads from --dump-dom.
 *
 *   HOT: the function to zoom into and search for (data-hot on <html>)
 *   COMM: the workload's process name, whose track is hovered and
 *         clicked (data-comm on <html>)
 */
(function () {
	var root = document.documentElement, hot = root.getAttribute('data-hot') || 'main';
	var comm = root.getAttribute('data-comm') || 'main';
	var results = [];
	function check(name, fn) {
		var why;
		try {
			why = fn();
		} catch (e) {
			why = 'exception ' + e.message;
		}
		results.push(name + '=' + (why ? 'FAIL(' + why + ')' : 'ok'));
	}
	function at(el, type, dx, target) {
		var r = el.getBoundingClientRect();
		(target || el).dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true,
			button: 0, clientX: r.left + (dx === undefined ? r.width / 2 : dx), clientY: r.top + 5 }));
	}
	function frame(name) {
		var all = document.querySelectorAll('#fg .fr');
		for (var i = 0; i < all.length; i++)
			if (all[i].textContent === name)
				return all[i];
		return null;
	}
	var fg = document.getElementById('fg'), tip = document.getElementById('tip');

	check('hover', function () {
		var f = frame(hot);
		if (!f)
			return 'no frame ' + hot;
		at(f, 'mousemove');
		if (tip.hidden || tip.textContent.indexOf(hot) < 0 || tip.textContent.indexOf('%') < 0)
			return 'tooltip: ' + tip.textContent;
	});
	check('zoom', function () {
		var before = fg.querySelectorAll('.fr').length;
		at(frame(hot), 'click');
		var f = frame(hot);
		if (fg.getAttribute('data-zoom') !== hot || !f)
			return 'zoomed to ' + fg.getAttribute('data-zoom');
		if (Math.abs(f.offsetWidth - fg.clientWidth) > 2)
			return 'zoomed frame is ' + f.offsetWidth + ' of ' + fg.clientWidth + ' px';
		if (!fg.querySelector('.fr.anc'))
			return 'no ancestor row';
		document.getElementById('fg-reset').click();
		if (fg.getAttribute('data-zoom') !== 'all' || fg.querySelectorAll('.fr').length !== before)
			return 'reset did not restore the view';
	});
	check('search', function () {
		var s = document.getElementById('fg-search');
		s.value = hot;
		s.dispatchEvent(new Event('input', { bubbles: true }));
		var m = document.getElementById('fg-match').textContent;
		if (!/^Matched: [0-9.]+% in [0-9,]+ frames?$/.test(m))
			return 'match line: ' + m;
		if (!fg.querySelector('.fr.match'))
			return 'nothing highlighted';
		s.value = '';
		s.dispatchEvent(new Event('input', { bubbles: true }));
		if (fg.querySelector('.fr.match') || document.getElementById('fg-match').textContent)
			return 'clearing the search left highlights';
	});
	check('inverted', function () {
		/* the first row under the root: tasks in the caller view,
		 * running functions in the inverted one */
		function firstRow() {   /* pruned boxes (t3) may be anywhere */
			var rows = fg.querySelectorAll('.fr'), kinds = {};
			for (var i = 0; i < rows.length; i++)
				if (rows[i].style.top === '18px' && !rows[i].classList.contains('t3'))
					kinds[rows[i].className.split(' ')[1]] = 1;
			return Object.keys(kinds).sort().join(',');
		}
		var before = firstRow(), inv = document.getElementById('fg-invert');
		inv.click();
		var after = firstRow();
		inv.click();
		if (before !== 't0')
			return 'caller view first row: ' + before;
		if (!after || after.indexOf('t0') >= 0)
			return 'inverted view first row: ' + after;
	});
	check('timeline', function () {
		var tl = document.getElementById('tl'), lane = tl.querySelector('.lane canvas');
		if (!lane)
			return 'no lane';
		var v = tl.getAttribute('data-view').split(',').map(Number);
		document.getElementById('tl-in').click();
		var z = tl.getAttribute('data-view').split(',').map(Number);
		if (!(z[1] - z[0] < (v[1] - v[0]) * 0.6))
			return 'zoom in: ' + v + ' -> ' + z;
		at(lane, 'mousedown', 200);
		at(lane, 'mousemove', 100, window);
		at(lane, 'mouseup', 100, window);
		var p = tl.getAttribute('data-view').split(',').map(Number);
		if (!(p[0] > z[0]) || Math.abs((p[1] - p[0]) - (z[1] - z[0])) > 2)
			return 'drag right to left did not pan later: ' + z + ' -> ' + p;
		at(lane, 'mousemove');
		if (tip.hidden || !/CPU|pid/.test(tip.textContent))
			return 'lane tooltip: ' + tip.textContent;
		document.getElementById('tl-reset').click();
		if (tl.getAttribute('data-view') !== v.join(','))
			return 'reset: ' + tl.getAttribute('data-view');
		/* a click on a run follows its task; a second click on the
		 * same place lets go. Where the runs are depends on how the
		 * recorded host scheduled the workload (on a loaded machine the
		 * middle of every lane can be idle), so the clicks sweep each
		 * lane until one lands on a run. */
		var lanes = tl.querySelectorAll('.lane[data-cpu] canvas'), sel = document.getElementById('tl-sel');
		var hit = null, hx;
		for (var i = 0; i < lanes.length && !hit; i++) {
			var w = lanes[i].getBoundingClientRect().width;
			for (var k = 1; k < 40 && !hit; k++) {
				at(lanes[i], 'mousedown', w * k / 40);
				at(lanes[i], 'mouseup', w * k / 40, window);
				if (sel.textContent) {
					hit = lanes[i];
					hx = w * k / 40;
				}
			}
		}
		if (!/^Following .* pid [0-9]+, tid [0-9]+/.test(sel.textContent))
			return 'click on a run: "' + sel.textContent + '"';
		var line = sel.textContent;
		at(hit, 'mousedown', hx);
		at(hit, 'mouseup', hx, window);
		if (sel.textContent)
			return 'second click kept ' + sel.textContent;
		results.push('follow=' + JSON.stringify(line).replace(/"/g, "'"));
	});
	check('tracks', function () {
		var tl = document.getElementById('tl'), sel = document.getElementById('tl-sel');
		var legend = tl.querySelectorAll('.tk-legend > span');
		if (legend.length < 3)
			return 'legend has ' + legend.length + ' items';
		var rows = tl.querySelectorAll('.tk-row[data-pid]'), row = null, i;
		for (i = 0; i < rows.length && !row; i++)
			if (rows[i].firstChild.textContent.indexOf(comm) >= 0)
				row = rows[i];
		if (!row)
			return 'no process track named ' + comm + ' in ' + rows.length;
		/* the workload spun all along: the middle of its track ran */
		var c = row.querySelector('canvas');
		at(c, 'mousemove');
		if (tip.hidden || tip.textContent.indexOf(comm) < 0 ||
		    !/samples \u2248 [0-9]+/.test(tip.textContent) || !/on CPU \u2248/.test(tip.textContent))
			return 'track tooltip: ' + tip.textContent;
		at(c, 'mousedown');
		at(c, 'mouseup', undefined, window);
		if (sel.textContent.indexOf('Following ' + comm) !== 0)
			return 'click on the track: "' + sel.textContent + '"';
		at(c, 'mousedown');
		at(c, 'mouseup', undefined, window);
		if (sel.textContent)
			return 'second click kept ' + sel.textContent;
		/* a process with threads opens into them and closes again */
		var labels = tl.querySelectorAll('.label.tk-proc[aria-expanded=false]'), lbl = null;
		for (i = 0; i < labels.length && !lbl; i++)
			if (labels[i].textContent.charAt(0) === '\u25b8')
				lbl = labels[i];
		if (lbl) {
			var pid = lbl.parentNode.getAttribute('data-pid');
			lbl.click();
			var open = tl.querySelector('.tk-row[data-pid="' + pid + '"] .label');
			var threads = tl.querySelectorAll('.tk-trow').length;
			if (!threads || open.getAttribute('aria-expanded') !== 'true')
				return 'opening pid ' + pid + ' showed ' + threads + ' threads';
			open.click();
			if (tl.querySelectorAll('.tk-trow').length)
				return 'closing pid ' + pid + ' left its threads';
			results.push('threads=' + threads);
		}
	});
	check('select', function () {
		/* a drag on the time axis selects a range: the flame graph
		 * shrinks to it, the address keeps it; Clear restores */
		var tl = document.getElementById('tl'), axis = tl.querySelector('.axis canvas');
		var total = fg.getAttribute('data-total'), w = axis.getBoundingClientRect().width;
		/* the tables follow the range and come back whole on Clear */
		var fnTable = document.querySelector('[data-doc="report"] table[data-section="rows"]');
		var wholeRows = fnTable ? fnTable.tBodies[0].textContent : '';
		if (!fnTable || !wholeRows)
			return 'no top-functions rows';
		at(axis, 'mousedown', w * 0.25);
		at(axis, 'mousemove', w * 0.5, window);
		at(axis, 'mouseup', w * 0.5, window);
		var frag = root.getAttribute('data-selection') || '';
		if (!/^t=[0-9]+,[0-9]+$/.test(frag))
			return 'drag on the axis: selection "' + frag + '"';
		if (location.hash !== '#' + frag)
			return 'address ' + location.hash + ' for ' + frag;
		var part = fg.getAttribute('data-total').split(',').map(Number);
		var all = total.split(',').map(Number);
		if (!(part[1] > 0 && part[1] < all[1]))
			return 'a quarter of the trace: ' + part + ' of ' + all;
		if (!tl.getAttribute('data-range'))
			return 'no range drawn';
		if (!fnTable.getAttribute('data-selected') || fnTable.tBodies[0].textContent === wholeRows)
			return 'the top-functions table did not follow the range';
		/* a click on a track adds its process */
		var row = tl.querySelector('.tk-row[data-pid] canvas');
		at(row, 'mousedown');
		at(row, 'mouseup', undefined, window);
		var frag2 = root.getAttribute('data-selection');
		if (frag2 !== frag + '&pid=' + row.parentNode.getAttribute('data-pid'))
			return 'click on a track: selection "' + frag2 + '"';
		var both = fg.getAttribute('data-total').split(',').map(Number);
		if (!(both[1] <= part[1]))
			return 'range and process: ' + both + ' more than the range alone ' + part;
		document.getElementById('sel-clear').click();
		if (root.getAttribute('data-selection') || location.hash ||
		    fg.getAttribute('data-total') !== total || tl.getAttribute('data-range'))
			return 'Clear left "' + root.getAttribute('data-selection') + '" ' + location.hash +
				' ' + fg.getAttribute('data-total') + ' of ' + total;
		if (fnTable.getAttribute('data-selected') || fnTable.tBodies[0].textContent !== wholeRows)
			return 'Clear did not restore the whole trace\'s top functions';
		results.push('selected=' + frag + '/' + part[1]);
	});
	check('calltree', function () {
		/* the call tree opens and closes a path; the functions tab
		 * lists HOT, and a click on it searches the flame graph */
		var ctEl = document.getElementById('ct');
		var before = ctEl.querySelectorAll('tbody tr').length;
		var open = ctEl.querySelector('tr.ct-open');
		if (!open)
			return 'no expandable row in ' + before;
		open.click();
		var after = ctEl.querySelectorAll('tbody tr').length;
		if (after === before)
			return 'clicking a path left ' + after + ' rows';
		ctEl.querySelector('tr[data-node="' + open.getAttribute('data-node') + '"]').click();
		if (ctEl.querySelectorAll('tbody tr').length !== before)
			return 'a second click did not restore ' + before + ' rows';
		document.getElementById('tab-fn').click();
		var fn = document.getElementById('fn');
		if (fn.hidden || !document.getElementById('ct').hidden)
			return 'the functions tab did not show';
		var row = fn.querySelector('tr[data-name="' + hot + '"]');
		if (!row)
			return 'no function ' + hot;
		row.click();
		if (!fg.querySelector('.fr.match'))
			return 'picking ' + hot + ' highlighted nothing';
		var s = document.getElementById('fg-search');
		s.value = '';
		s.dispatchEvent(new Event('input', { bubbles: true }));
		document.getElementById('tab-ct').click();
	});
	check('sort', function () {
		var th = document.querySelector('table.t[data-section="rows"] th[data-col="overhead"]');
		if (!th)
			return 'no Self column';
		th.click();
		var rows = th.closest('table').tBodies[0].rows, col = th.cellIndex;
		for (var i = 1; i < rows.length; i++)
			if (parseFloat(rows[i - 1].cells[col].textContent) < parseFloat(rows[i].cells[col].textContent))
				return 'not descending at row ' + i;
		if (th.getAttribute('aria-sort') !== 'descending')
			return 'aria-sort ' + th.getAttribute('aria-sort');
	});
	root.setAttribute('data-interact', results.join(' '));
})();
