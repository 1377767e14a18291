/*
 * tracks.js - a track per process under the CPU lanes, each expandable
 * into its threads: when it ran, how densely it was sampled, why it was
 * off the CPU, and where records were lost. Drawn by the timeline
 * (timeline.js), on its time axis: Timeline calls build() once, draw()
 * on every view change, hover() and pick() for the pointer.
 *
 * Data (analyzer/render/html.c, analyzer/render/tracks.h), times in ns:
 *   t0, bin, nbins   bins of the window, t0 from the trace start
 *   smaxp, smaxt     samples in the densest bin of a process, of a thread
 *   offcpu, switches whether the trace has off-CPU intervals, switches
 *   loss             flat [bin, records lost, ...]
 *   procs[]          busiest first: { pid, name, run, samples, off (ns and
 *                    counts in the window), nthreads, k, r, s, o, os,
 *                    t: threads [{ tid, name, run, samples, off, k, r, s,
 *                    o, os }] busiest first, hidden: threads not written }
 *   more             { procs, threads, run }: processes not written
 * r, s, o, os are strings of one character per bin (trailing empty bins
 * cut), a level 0..63 in the alphabet LEVELS: r the on-CPU time (63: k
 * CPUs busy the whole bin; a process's k is the most CPUs it used at
 * once), s the samples (63: smaxp or smaxt), o the off-CPU time (63: the
 * whole bin; a process shows its most blocked thread), os 1 + the state
 * of the bin's longest off-CPU block.
 */
var PerfrecTracks = (function () {
	var U = PerfrecUtil;
	var LEVELS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_';
	var TRACK_H = 22;
	/* OffCpu.State order */
	var STATES = [['unknown', '#a8a8a8'], ['runnable (waited for a CPU)', '#f0a830'],
		      ['sleeping (S)', '#7fb0e6'], ['disk (D)', '#d9480f'], ['idle (I)', '#c9d3de'],
		      ['stopped (T)', '#6d7b8a'], ['other', '#a1887f']];
	var LOSS = '#d32f2f';

	function lv(str, b) {
		return b < str.length ? LEVELS.indexOf(str.charAt(b)) : 0;
	}

	function Tracks(data, names, color) {
		this.d = data;
		this.names = names;
		this.color = color;
		this.open = {};       /* pid -> expanded */
		this.rows = [];       /* { c: canvas, tr: track, proc: bool, pid } */
		this.selTid = -1;
		this.selPid = -1;
		this.selProc = false;
	}

	Tracks.prototype.name = function (tr) {
		var id = tr.name;
		return id >= 0 && id < this.names.length ? String(this.names[id]) : '?';
	};

	Tracks.prototype.legend = function () {
		var items = [['linear-gradient(90deg,hsl(200,55%,55%),hsl(30,55%,55%))', 'on CPU (colour: task)'],
			     ['#39414f', 'samples (density)']];
		if (this.d.offcpu)
			STATES.forEach(function (s) { items.push([s[1], 'off CPU: ' + s[0]]); });
		items.push([LOSS, 'records lost']);
		return U.legend('div', 'legend tk-legend', items);
	};

	/* Builds the rows under el: a heading with the legend, the losses,
	 * the processes (and the threads of the open ones). addRow(label,
	 * canvas) is the timeline's: canvases it pans and zooms. */
	Tracks.prototype.build = function (el, addRow) {
		var self = this, d = this.d;
		this.rows = [];
		var head = document.createElement('div');
		head.className = 'tk-head';
		var title = document.createElement('span');
		title.className = 'tk-title';
		title.textContent = 'Processes by ' + (d.switches ? 'CPU time' : 'samples') +
			' (click a name to show its threads)';
		head.appendChild(title);
		head.appendChild(this.legend());
		el.appendChild(head);
		if (d.loss.length) {
			var lc = document.createElement('canvas');
			var lbl = document.createElement('div');
			lbl.className = 'label';
			var lost = 0;
			for (var i = 1; i < d.loss.length; i += 2)
				lost += d.loss[i];
			lbl.textContent = 'Lost ' + U.grouped(lost);
			lbl.title = U.grouped(lost) + ' records lost (red: where, by the loss records\' times)';
			addRow(lbl, lc, 'tk-loss');
			this.rows.push({ c: lc, loss: true });
		}
		d.procs.forEach(function (p) {
			var lbl = document.createElement('div');
			lbl.className = 'label tk-proc';
			var open = !!self.open[p.pid];
			lbl.textContent = (p.nthreads > 1 ? (open ? '\u25be ' : '\u25b8 ') : '  ') +
				self.name(p) + ' ' + p.pid;
			lbl.title = self.name(p) + ', pid ' + p.pid + ': ' + self.totals(p) + ', ' +
				U.grouped(p.nthreads) + (p.nthreads === 1 ? ' thread' : ' threads');
			lbl.setAttribute('role', 'button');
			lbl.setAttribute('aria-expanded', open ? 'true' : 'false');
			lbl.addEventListener('click', function () {
				self.open[p.pid] = !self.open[p.pid];
				if (self.onrebuild)
					self.onrebuild();
			});
			var c = document.createElement('canvas');
			var row = addRow(lbl, c, 'tk-row');
			row.setAttribute('data-pid', String(p.pid));
			self.rows.push({ c: c, tr: p, proc: true, pid: p.pid });
			if (!open || p.nthreads < 2)
				return;
			p.t.forEach(function (t) {
				var tl = document.createElement('div');
				tl.className = 'label tk-thread';
				tl.textContent = '\u2003' + self.name(t) + ' ' + t.tid;
				tl.title = self.name(t) + ', pid ' + p.pid + ', tid ' + t.tid + ': ' + self.totals(t);
				var tc = document.createElement('canvas');
				var tr = addRow(tl, tc, 'tk-row tk-trow');
				tr.setAttribute('data-tid', String(t.tid));
				self.rows.push({ c: tc, tr: t, proc: false, pid: p.pid });
			});
			if (p.hidden) {
				var hl = document.createElement('div');
				hl.className = 'tk-more';
				hl.textContent = '+' + U.grouped(p.hidden) + ' quieter threads not in this page';
				el.appendChild(hl);
			}
		});
		if (d.more.procs) {
			var m = document.createElement('div');
			m.className = 'tk-more';
			m.textContent = '+' + U.grouped(d.more.procs) + ' quieter processes (' +
				U.grouped(d.more.threads) + ' threads, ' + U.duration(d.more.run) +
				' on CPU) not in this page';
			el.appendChild(m);
		}
		this.select(this.selTid, this.selPid, this.selProc);
	};

	Tracks.prototype.totals = function (tr) {
		var parts = [];
		if (this.d.switches)
			parts.push(U.duration(tr.run) + ' on CPU');
		parts.push(U.grouped(tr.samples) + ' samples');
		if (this.d.offcpu)
			parts.push(U.duration(tr.off) + ' off CPU in long blocks');
		return parts.join(', ');
	};

	/* Draws every row for the view [v0, v1] (ns from t0 of the timeline,
	 * which is at tl0 from the trace start). setup(canvas, height) sizes
	 * a canvas and gives { ctx, w }. */
	Tracks.prototype.draw = function (v0, v1, tl0, setup) {
		var d = this.d, self = this, bin = d.bin, off = d.t0 - tl0;
		var first = Math.max(0, Math.floor((v0 - off) / bin));
		var last = Math.min(d.nbins - 1, Math.floor((v1 - off) / bin));
		this.rows.forEach(function (row) {
			var s = setup(row.c, TRACK_H), ctx = s.ctx, k = s.w / (v1 - v0), b, x;
			var bw = Math.max(1, bin * k);
			if (row.loss) {
				var maxl = 1, i;
				for (i = 1; i < d.loss.length; i += 2)
					maxl = Math.max(maxl, d.loss[i]);
				ctx.fillStyle = LOSS;
				for (i = 0; i < d.loss.length; i += 2) {
					x = (off + d.loss[i] * bin - v0) * k;
					var h = 4 + (TRACK_H - 6) * Math.log(1 + d.loss[i + 1]) / Math.log(1 + maxl);
					ctx.fillRect(x, TRACK_H - 1 - h, Math.max(2, bw), h);
				}
				return;
			}
			var tr = row.tr, nm = self.name(tr);
			var faded = self.selTid >= 0 && (self.selProc ? row.pid !== self.selPid :
				row.proc ? row.pid !== self.selPid : tr.tid !== self.selTid);
			ctx.globalAlpha = faded ? 0.35 : 1;
			/* on CPU: the top band, opacity the busy share */
			var seg = -1, labels = 0;
			function label(b0, b1) {
				var x0 = (off + b0 * bin - v0) * k, w = (b1 - b0) * bin * k;
				if (w < 50 || labels >= 24)
					return;
				labels++;
				ctx.save();
				ctx.beginPath();
				ctx.rect(x0, 0, w, 12);
				ctx.clip();
				ctx.fillStyle = '#111';
				ctx.font = '10px system-ui, sans-serif';
				ctx.textBaseline = 'middle';
				ctx.fillText(nm, Math.max(x0, 0) + 3, 6.5);
				ctx.restore();
			}
			for (b = first; b <= last + 1; b++) {
				var r = b <= last ? lv(tr.r, b) : 0;
				if (r) {
					ctx.fillStyle = self.color(nm, (0.2 + 0.8 * r / 63).toFixed(2));
					ctx.fillRect((off + b * bin - v0) * k, 1, bw, 11);
					if (seg < 0)
						seg = b;
				} else if (seg >= 0) {
					label(seg, b);
					seg = -1;
				}
			}
			/* samples: a bar chart in the middle band */
			ctx.fillStyle = '#39414f';
			for (b = first; b <= last && b < tr.s.length; b++) {
				var sl = lv(tr.s, b);
				if (sl)
					ctx.fillRect((off + b * bin - v0) * k, 18 - 5 * sl / 63, bw, 5 * sl / 63);
			}
			/* off CPU: the bottom band, coloured by state */
			for (b = first; b <= last && b < tr.o.length; b++) {
				var ol = lv(tr.o, b);
				if (!ol)
					continue;
				var st = STATES[Math.max(0, lv(tr.os, b) - 1)] || STATES[6];
				ctx.globalAlpha = (faded ? 0.35 : 1) * (0.3 + 0.7 * ol / 63);
				ctx.fillStyle = st[1];
				ctx.fillRect((off + b * bin - v0) * k, 18, bw, 4);
			}
			ctx.globalAlpha = 1;
		});
	};

	/* Tooltip lines for row i at ns t from the trace start. */
	Tracks.prototype.describe = function (i, t) {
		var row = this.rows[i], d = this.d, bin = d.bin;
		var b = Math.floor((t - d.t0) / bin);
		if (!row || b < 0 || b >= d.nbins)
			return null;
		var when = U.seconds(d.t0 + b * bin, 1e3) + ' + ' + U.duration(bin);
		if (row.loss) {
			for (var j = 0; j < d.loss.length; j += 2)
				if (d.loss[j] === b)
					return { title: U.grouped(d.loss[j + 1]) + ' records lost', lines: [when] };
			return { title: 'no loss', lines: [when] };
		}
		var tr = row.tr, lines = [when];
		var r = lv(tr.r, b), s = lv(tr.s, b), o = lv(tr.o, b);
		if (d.switches)
			lines.push('on CPU \u2248 ' + U.duration(r / 63 * tr.k * bin) +
				(tr.k > 1 ? ' (up to ' + tr.k + ' CPUs at once)' : ''));
		lines.push('samples \u2248 ' + Math.round(s / 63 * (row.proc ? d.smaxp : d.smaxt)));
		if (d.offcpu && o)
			lines.push('off CPU \u2248 ' + U.duration(o / 63 * bin) + ', mostly ' +
				(STATES[Math.max(0, lv(tr.os, b) - 1)] || STATES[6])[0]);
		lines.push(this.totals(tr) + ' in all');
		return { title: this.name(tr) + (row.proc ? '  pid ' + tr.pid :
			'  pid ' + row.pid + ', tid ' + tr.tid), lines: lines };
	};

	/* Selects row i's thread, or its process (selProc; selTid its main
	 * thread), or clears the selection when it is already selected.
	 * Returns the tid selected, or -1. */
	Tracks.prototype.pick = function (i) {
		var row = this.rows[i];
		if (!row || row.loss)
			return this.selTid;
		var tid = row.proc ? row.pid : row.tr.tid;
		if (tid === this.selTid && row.proc === this.selProc)
			this.select(-1, -1, false);
		else
			this.select(tid, row.pid, row.proc);
		return this.selTid;
	};

	Tracks.prototype.select = function (tid, pid, proc) {
		this.selTid = tid;
		this.selPid = pid;
		this.selProc = !!proc;
		var self = this;
		this.rows.forEach(function (row) {
			if (row.loss)
				return;
			var on = tid >= 0 && (row.proc ? self.selProc && row.pid === pid :
					      !self.selProc && row.tr.tid === tid);
			row.c.parentNode.classList.toggle('tk-sel', on);
		});
	};

	return { Tracks: Tracks, STATES: STATES, LEVELS: LEVELS };
})();
