/*
 * timeline.js - one lane per CPU: which task ran when, from the switch
 * records, zoomable and pannable on a time axis.
 *
 * Data (analyzer/render/html.c, analyzer/render/timeline.h), times in ns from t0:
 *   t0, t1     the window, ns from the trace start
 *   bucket     bucket width in ns; nbuckets per lane
 *   tasks      flat [pid, tid, name id, gap start, gap ns, ...]: task i at
 *              5 i; its longest off-CPU gap between two runs (start -1:
 *              none)
 *   lanes[]    { cpu, busy, intervals,
 *                spans: flat [start, duration, task, ...] (runs at least
 *                       a bucket long, exact),
 *                buckets: flat [index, busy ns, runs, top task or -1, ...]
 *                       (shorter runs summed per bucket, exact busy) }
 * Lanes are canvases (thousands of rectangles); the lane labels are text.
 * Under the lanes, the tracks of processes and threads (tracks.js), on
 * the same axis: they pan and zoom with the lanes. A page without switch
 * records has tracks and no lanes.
 * Dragging on a CPU lane pans; dragging on the time axis or a track
 * selects a time range (onrange(start, end), ns from the trace start,
 * shaded on every row; a click on the axis clears it).
 * Empty space in a lane is the CPU idle; clicking a run selects its task:
 * the other tasks fade, so its runs and the gaps between them stand out
 * across lanes, and its longest off-CPU gap is marked in red.
 */
var PerfrecTimeline = (function () {
	var U = PerfrecUtil;
	var LANE_H = 20, AXIS_H = 22, TASK = 5;

	function taskColor(name, alpha) {
		var h = U.hash(name);
		return 'hsla(' + Math.round(360 * h) + ',55%,' + Math.round(48 + 14 * U.hash(name + '.')) +
			'%,' + alpha + ')';
	}

	function prepLane(l) {
		var n = Math.floor(l.spans.length / 3), order = [], i;
		for (i = 0; i < n; i++)
			order.push(i);
		order.sort(function (a, b) { return l.spans[3 * a] - l.spans[3 * b]; });
		var lane = { cpu: l.cpu, busy: l.busy, intervals: l.intervals,
			     ss: new Float64Array(n), sd: new Float64Array(n), st: new Int32Array(n),
			     maxDur: 0 };
		for (i = 0; i < n; i++) {
			var j = order[i];
			lane.ss[i] = l.spans[3 * j];
			lane.sd[i] = l.spans[3 * j + 1];
			lane.st[i] = l.spans[3 * j + 2];
			if (lane.sd[i] > lane.maxDur)
				lane.maxDur = lane.sd[i];
		}
		var m = Math.floor(l.buckets.length / 4);
		lane.bi = new Float64Array(m);
		lane.bb = new Float64Array(m);
		lane.bn = new Float64Array(m);
		lane.bt = new Int32Array(m);
		for (i = 0; i < m; i++) {   /* written in bucket order */
			lane.bi[i] = l.buckets[4 * i];
			lane.bb[i] = l.buckets[4 * i + 1];
			lane.bn[i] = l.buckets[4 * i + 2];
			lane.bt[i] = l.buckets[4 * i + 3];
		}
		return lane;
	}

	/* First index in the sorted array a with a[i] >= v. */
	function lower(a, v) {
		var lo = 0, hi = a.length;
		while (lo < hi) {
			var mid = (lo + hi) >> 1;
			if (a[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	function Timeline(el, data, names, tip, tracks) {
		this.el = el;
		this.tip = tip;
		this.d = data;
		this.names = names;
		this.span = Math.max(1, data.t1 - data.t0);
		this.v0 = 0;
		this.v1 = this.span;
		this.sel = -1;
		this.onselect = null;
		this.onrange = null;      /* (start, end) ns from the trace start, or (-1, -1) */
		this.onpick = null;       /* a track clicked: ({ tid, pid }) */
		this.range = null;        /* [start, end] ns from t0 */
		this.tracks = tracks || null;
		this.lanes = data.lanes.map(prepLane);
		this.canvases = [];
		this.build();
		this.draw();
	}

	Timeline.prototype.taskName = function (t) {
		var id = this.d.tasks[TASK * t + 2];
		return id >= 0 && id < this.names.length ? String(this.names[id]) : '?';
	};

	Timeline.prototype.taskLine = function (t) {
		return this.taskName(t) + '  pid ' + this.d.tasks[TASK * t] + ', tid ' +
			this.d.tasks[TASK * t + 1];
	};

	Timeline.prototype.build = function () {
		var el = this.el, self = this;
		U.clear(el);
		var axis = document.createElement('div');
		axis.className = 'axis';
		var al = document.createElement('div');
		al.className = 'label';
		al.textContent = 'seconds';
		axis.appendChild(al);
		this.axis = document.createElement('canvas');
		this.axis.style.height = AXIS_H + 'px';
		axis.appendChild(this.axis);
		el.appendChild(axis);
		var win = this.span;
		this.lanes.forEach(function (lane, i) {
			var row = document.createElement('div');
			row.className = 'lane';
			row.setAttribute('data-cpu', String(lane.cpu));
			var label = document.createElement('div');
			label.className = 'label';
			label.textContent = 'CPU ' + lane.cpu + '  ' + U.pct(lane.busy, win);
			label.title = 'busy ' + U.duration(lane.busy) + ' in ' + U.grouped(lane.intervals) +
				' runs';
			row.appendChild(label);
			var c = document.createElement('canvas');
			c.style.height = LANE_H + 'px';
			c.perfrecLane = i;
			row.appendChild(c);
			self.canvases.push(c);
			el.appendChild(row);
		});
		if (this.tracks) {
			this.tkEl = document.createElement('div');
			this.tkEl.className = 'tracks';
			el.appendChild(this.tkEl);
			this.tracks.onrebuild = function () {
				self.buildTracks();
				self.draw();
			};
			this.buildTracks();
		}
		var drag = null;
		function at(ev, c) {
			var r = c.getBoundingClientRect();
			return { x: ev.clientX - r.left, w: r.width || 1 };
		}
		el.addEventListener('mousedown', function (ev) {
			if (ev.target.tagName !== 'CANVAS' || ev.button !== 0)
				return;
			var selecting = ev.target === self.axis || ev.target.perfrecTrack !== undefined;
			drag = { x: ev.clientX, v0: self.v0, v1: self.v1, moved: false, c: ev.target,
				 select: selecting, t: self.timeAt(ev, ev.target) };
			ev.target.classList.add('dragging');
			ev.preventDefault();
		});
		window.addEventListener('mousemove', function (ev) {
			if (!drag)
				return;
			var p = at(ev, drag.c), dx = ev.clientX - drag.x;
			if (Math.abs(dx) > 2)
				drag.moved = true;
			if (drag.select) {
				if (drag.moved) {
					var t = self.timeAt(ev, drag.c);
					self.range = [Math.min(drag.t, t), Math.max(drag.t, t)];
					self.draw();
				}
				return;
			}
			var dt = dx / p.w * (drag.v1 - drag.v0);
			self.setView(drag.v0 - dt, drag.v1 - dt);
		});
		window.addEventListener('mouseup', function (ev) {
			if (!drag)
				return;
			drag.c.classList.remove('dragging');
			if (drag.select && drag.moved) {
				var t = self.timeAt(ev, drag.c);
				self.setRange(Math.min(drag.t, t), Math.max(drag.t, t));
			} else if (!drag.moved && drag.c === self.axis) {
				self.setRange(-1, -1);
			} else if (!drag.moved && drag.c.perfrecLane !== undefined) {
				self.pick(ev, drag.c);
			} else if (!drag.moved && drag.c.perfrecTrack !== undefined) {
				self.pickTrack(drag.c.perfrecTrack);
			}
			drag = null;
		});
		el.addEventListener('mousemove', function (ev) {
			if (!drag && ev.target.perfrecTrack !== undefined) {
				self.hoverTrack(ev, ev.target);
				return;
			}
			if (drag || ev.target.tagName !== 'CANVAS' || ev.target.perfrecLane === undefined) {
				if (!drag)
					self.tip.hide();
				return;
			}
			self.hover(ev, ev.target);
		});
		el.addEventListener('mouseleave', function () { self.tip.hide(); });
		el.addEventListener('dblclick', function (ev) {
			if (ev.target.tagName !== 'CANVAS')
				return;
			var p = at(ev, ev.target);
			self.zoomAt(p.x / p.w, ev.shiftKey ? 2 : 0.5);
		});
		el.addEventListener('wheel', function (ev) {
			if (!ev.ctrlKey || ev.target.tagName !== 'CANVAS')
				return;
			ev.preventDefault();
			var p = at(ev, ev.target);
			self.zoomAt(p.x / p.w, Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.003))));
		}, { passive: false });
		window.addEventListener('resize', function () { self.draw(); });
	};

	/* The tracks' rows, again when a process opens or closes. */
	Timeline.prototype.buildTracks = function () {
		var el = this.tkEl, tracks = this.tracks;
		U.clear(el);
		tracks.build(el, function (label, c, cls) {
			var row = document.createElement('div');
			row.className = 'lane ' + cls;
			row.appendChild(label);
			c.style.height = '22px';
			c.perfrecTrack = tracks.rows.length;
			row.appendChild(c);
			el.appendChild(row);
			return row;
		});
	};

	/* ns from t0 under the pointer */
	Timeline.prototype.timeAt = function (ev, c) {
		var r = c.getBoundingClientRect();
		var f = Math.max(0, Math.min(1, (ev.clientX - r.left) / (r.width || 1)));
		return this.v0 + f * (this.v1 - this.v0);
	};

	/* Selects [a, b] (ns from t0; a < 0: none) and says so. */
	Timeline.prototype.setRange = function (a, b) {
		this.range = a < 0 || b <= a ? null : [a, b];
		this.draw();
		if (this.onrange)
			this.onrange(this.range ? this.d.t0 + a : -1, this.range ? this.d.t0 + b : -1);
	};

	Timeline.prototype.setView = function (a, b) {
		var w = Math.min(this.span, Math.max(1000, b - a));   /* 1 us at most zoom */
		if (a < 0)
			a = 0;
		if (a + w > this.span)
			a = this.span - w;
		this.v0 = a;
		this.v1 = a + w;
		this.draw();
	};

	/* Zooms by factor (< 1 in) keeping the time under fraction f of the
	 * width in place. */
	Timeline.prototype.zoomAt = function (f, factor) {
		var t = this.v0 + f * (this.v1 - this.v0), w = (this.v1 - this.v0) * factor;
		this.setView(t - f * w, t - f * w + w);
	};

	Timeline.prototype.reset = function () {
		this.setView(0, this.span);
	};

	Timeline.prototype.draw = function () {
		var dpr = window.devicePixelRatio || 1, self = this;
		var v0 = this.v0, v1 = this.v1;
		/* the view in ns from t0, for the inspector and tests */
		this.el.setAttribute('data-view', Math.round(v0) + ',' + Math.round(v1));
		var range = this.range, drawn = [];
		function setup(c, h) {
			var w = c.clientWidth || 600;
			c.width = Math.round(w * dpr);
			c.height = Math.round(h * dpr);
			var ctx = c.getContext('2d');
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, w, h);
			drawn.push({ ctx: ctx, w: w, h: h });
			return { ctx: ctx, w: w };
		}
		/* axis: 1-2-5 steps, about one tick per 100 px */
		var a = setup(this.axis, AXIS_H), k = a.w / (v1 - v0);
		var raw = (v1 - v0) / Math.max(1, a.w / 100), step = Math.pow(10, Math.floor(Math.log10(raw)));
		if (raw / step > 5)
			step *= 5;
		else if (raw / step > 2)
			step *= 2;
		var ax = a.ctx;
		ax.fillStyle = '#5d6675';
		ax.strokeStyle = '#c4c9d2';
		ax.font = '11px system-ui, sans-serif';
		ax.textBaseline = 'top';
		var first = Math.ceil((this.d.t0 + v0) / step) * step;
		for (var t = first; t <= this.d.t0 + v1; t += step) {
			var x = (t - this.d.t0 - v0) * k;
			ax.fillRect(Math.round(x), AXIS_H - 6, 1, 6);
			ax.fillText(U.seconds(t, step), x + 3, 4);
		}
		var gap = this.gap(this.sel);
		if (gap) {
			ax.fillStyle = 'rgba(211,47,47,0.8)';
			ax.fillRect((gap[0] - v0) * k, AXIS_H - 3, Math.max(1, gap[1] * k), 3);
		}
		if (this.tracks)
			this.tracks.draw(v0, v1, this.d.t0, setup);
		/* the selected range, over every row drawn */
		this.el.setAttribute('data-range', range ? Math.round(this.d.t0 + range[0]) + ',' +
			Math.round(this.d.t0 + range[1]) : '');
		if (range) {
			drawn.forEach(function (c) {
				var kk = c.w / (v1 - v0), x0 = (range[0] - v0) * kk;
				c.ctx.fillStyle = 'rgba(44,92,197,0.16)';
				c.ctx.fillRect(x0, 0, Math.max(1, (range[1] - range[0]) * kk), c.h);
				c.ctx.fillStyle = 'rgba(44,92,197,0.8)';
				c.ctx.fillRect(x0, 0, 1, c.h);
				c.ctx.fillRect(x0 + (range[1] - range[0]) * kk, 0, 1, c.h);
			});
		}
		this.lanes.forEach(function (lane, i) {
			var s = setup(self.canvases[i], LANE_H), ctx = s.ctx, kk = s.w / (v1 - v0);
			var bw = self.d.bucket, j, sel = self.sel;
			if (gap) {   /* the followed task's longest time off-CPU */
				ctx.fillStyle = 'rgba(211,47,47,0.16)';
				ctx.fillRect((gap[0] - v0) * kk, 0, Math.max(1, gap[1] * kk), LANE_H);
			}
			/* short runs: one block per bucket, its opacity the busy share */
			for (j = lower(lane.bi, Math.floor(v0 / bw)); j < lane.bi.length; j++) {
				var b0 = lane.bi[j] * bw;
				if (b0 > v1)
					break;
				var top = lane.bt[j];
				var alpha = 0.25 + 0.75 * Math.min(1, lane.bb[j] / bw);
				if (sel >= 0 && top !== sel)
					alpha *= 0.25;
				ctx.fillStyle = top >= 0 ? taskColor(self.taskName(top), alpha.toFixed(2)) :
					'rgba(120,120,120,' + alpha.toFixed(2) + ')';
				ctx.fillRect((b0 - v0) * kk, 2, Math.max(1, bw * kk), LANE_H - 4);
			}
			/* long runs, exact */
			for (j = lower(lane.ss, v0 - lane.maxDur); j < lane.ss.length; j++) {
				var s0 = lane.ss[j];
				if (s0 > v1)
					break;
				if (s0 + lane.sd[j] < v0)
					continue;
				var task = lane.st[j];
				ctx.fillStyle = taskColor(self.taskName(task), sel >= 0 && task !== sel ? 0.2 : 0.95);
				var x0 = (s0 - v0) * kk, w0 = Math.max(1, lane.sd[j] * kk);
				ctx.fillRect(x0, 1, w0, LANE_H - 2);
				if (w0 > 60) {
					ctx.fillStyle = '#111';
					ctx.font = '11px system-ui, sans-serif';
					ctx.textBaseline = 'middle';
					ctx.save();
					ctx.beginPath();
					ctx.rect(x0, 0, w0, LANE_H);
					ctx.clip();
					ctx.fillText(self.taskName(task), Math.max(x0, 0) + 3, LANE_H / 2);
					ctx.restore();
				}
			}
		});
	};

	/* [start, ns] of task t's longest off-CPU gap, or null. */
	Timeline.prototype.gap = function (t) {
		if (t < 0 || this.d.tasks[TASK * t + 3] < 0)
			return null;
		return [this.d.tasks[TASK * t + 3], this.d.tasks[TASK * t + 4]];
	};

	/* What is under the pointer: { span: j } or { bucket: j } or null. */
	Timeline.prototype.find = function (lane, t, slack) {
		var j = lower(lane.ss, t + slack) - 1;
		for (; j >= 0 && lane.ss[j] + lane.maxDur >= t - slack; j--)
			if (lane.ss[j] <= t + slack && lane.ss[j] + lane.sd[j] >= t - slack)
				return { span: j };
		var b = Math.floor(t / this.d.bucket), i = lower(lane.bi, b);
		if (i < lane.bi.length && lane.bi[i] === b)
			return { bucket: i };
		return null;
	};

	Timeline.prototype.hover = function (ev, c) {
		var r = c.getBoundingClientRect(), lane = this.lanes[c.perfrecLane];
		var per = (this.v1 - this.v0) / (r.width || 1);
		var t = this.v0 + (ev.clientX - r.left) * per, hit = this.find(lane, t, per);
		var at = this.d.t0 + t;
		if (!hit) {
			this.tip.show(ev, 'CPU ' + lane.cpu + ' idle', ['at ' + U.seconds(at, per)]);
			return;
		}
		if (hit.span !== undefined) {
			var j = hit.span, task = lane.st[j];
			this.tip.show(ev, this.taskName(task), [
				'pid ' + this.d.tasks[TASK * task] + ', tid ' + this.d.tasks[TASK * task + 1] +
					', CPU ' + lane.cpu,
				'ran ' + U.duration(lane.sd[j]) + ' from ' +
					U.seconds(this.d.t0 + lane.ss[j], 1e3)]);
			return;
		}
		var i = hit.bucket, bw = this.d.bucket, b0 = this.d.t0 + lane.bi[i] * bw;
		var lines = [U.seconds(b0, 1e3) + ' + ' + U.duration(bw) + ': busy ' +
			     U.duration(lane.bb[i]) + ' (' + U.pct(lane.bb[i], bw) + ') in ' +
			     U.grouped(lane.bn[i]) + ' short runs'];
		if (lane.bt[i] >= 0)
			lines.push('longest: ' + this.taskLine(lane.bt[i]));
		this.tip.show(ev, 'CPU ' + lane.cpu + ', many short runs', lines);
	};

	Timeline.prototype.hoverTrack = function (ev, c) {
		var r = c.getBoundingClientRect(), per = (this.v1 - this.v0) / (r.width || 1);
		var t = this.d.t0 + this.v0 + (ev.clientX - r.left) * per;
		var what = this.tracks.describe(c.perfrecTrack, t);
		if (what)
			this.tip.show(ev, what.title, what.lines);
		else
			this.tip.hide();
	};

	/* A track clicked: selected (onpick), and its thread (a process's
	 * main thread) followed in the lanes. */
	Timeline.prototype.pickTrack = function (i) {
		var tid = this.tracks.pick(i), task = -1;
		if (this.onpick)
			this.onpick({ tid: this.tracks.selProc ? -1 : tid,
				      pid: tid >= 0 ? this.tracks.selPid : -1 });
		for (var t = 0; tid >= 0 && t * TASK < this.d.tasks.length; t++)
			if (this.d.tasks[TASK * t + 1] === tid) {
				task = t;
				break;
			}
		this.select(task, tid);
	};

	Timeline.prototype.pick = function (ev, c) {
		var r = c.getBoundingClientRect(), lane = this.lanes[c.perfrecLane];
		var per = (this.v1 - this.v0) / (r.width || 1);
		var hit = this.find(lane, this.v0 + (ev.clientX - r.left) * per, per);
		var task = !hit ? -1 : hit.span !== undefined ? lane.st[hit.span] : lane.bt[hit.bucket];
		task = task === this.sel ? -1 : task;
		this.select(task, -1);
	};

	/* Follows lane task `task` (-1: none) or, when it ran on no lane
	 * shown, the tracks' thread tid. */
	Timeline.prototype.select = function (task, tid) {
		this.sel = task;
		this.draw();
		if (this.onselect) {
			var g = this.gap(this.sel), line = null;
			if (this.sel >= 0)
				line = this.taskLine(this.sel) + (g ? '; longest off-CPU gap (red) ' +
					U.duration(g[1]) + ' from ' + U.seconds(this.d.t0 + g[0], 1e3) : '');
			else if (tid >= 0)
				line = 'tid ' + tid;
			this.onselect(line);
		}
	};

	return { Timeline: Timeline, taskColor: taskColor };
})();
