#!/usr/bin/env python3
"""requests.py - every request a page asks for, from Chromium's own log.

    requests.py BROWSER URL

Starts headless Chromium with its DevTools protocol on a pipe (fds 3 and
4, NUL-separated JSON: no socket, no port), opens URL in a new tab with
the Network domain on, waits until the page has drawn everything (its
root's data-ready="1", or its load event for a page without one) and one
second more, and prints one line per request the page asked for:

    URL<TAB>TYPE<TAB>RESULT

RESULT is "-" for a request that was made, or why it was not (Chromium's
blockedReason, e.g. "csp", or its error text): a request the page's
Content-Security-Policy refused is still listed, so the log shows what
the page tried, not only what went through. Exits 2 when the browser
fails or the page does not load within 60 s.
"""
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time


def high(fd):
    """fd moved to 10 or above (close-on-exec)."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Browser:
    def __init__(self, path):
        # above fd 4, so that moving them to 3 and 4 overwrites none
        self.to_r, self.to_w, self.from_r, self.from_w = [
            high(fd) for fd in os.pipe() + os.pipe()]
        self.dir = tempfile.TemporaryDirectory(prefix='requests.')

        def fds():   # the protocol's pipe is the child's fds 3 and 4
            os.dup2(self.to_r, 3)
            os.dup2(self.from_w, 4)

        self.proc = subprocess.Popen(
            [path, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
             '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync', '--remote-debugging-pipe',
             '--user-data-dir=' + self.dir.name, 'about:blank'],
            preexec_fn=fds, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(self.to_r)
        os.close(self.from_w)
        self.buf = b''
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_w, json.dumps(msg).encode() + b'\0')
        return self.next_id

    def read(self, deadline):
        """The next message, or None at the deadline."""
        while b'\0' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                return None
            chunk = os.read(self.from_r, 65536)
            if not chunk:
                raise RuntimeError('the browser closed its pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        """Sends and waits for the reply; events on the way are kept."""
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m is None:
                raise RuntimeError('no reply to ' + method)
            if m.get('id') == want:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            if 'method' in m:
                self.events.append(m)

    def close(self):
        try:
            self.send('Browser.close')
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.dir.cleanup()


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    b = Browser(argv[1])
    try:
        target = b.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        session = b.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        b.call('Network.enable', session=session)
        b.call('Page.enable', session=session)
        b.call('Page.navigate', {'url': argv[2]}, session=session)
        deadline = time.monotonic() + 60
        loaded = False
        while time.monotonic() < deadline:
            m = b.read(time.monotonic() + 0.2)
            if m and m.get('method') == 'Page.loadEventFired':
                loaded = True
            if m and 'method' in m:
                b.events.append(m)
            if m is None and loaded:
                r = b.call('Runtime.evaluate', {'expression':
                           "document.documentElement.getAttribute('data-ready') || " +
                           "(document.getElementById('perfrec-data') ? '' : 'none')",
                           'returnByValue': True}, session=session)
                if r.get('result', {}).get('value'):
                    break
        else:
            print('the page did not load and draw within 60 s', file=sys.stderr)
            return 2
        end = time.monotonic() + 1   # late requests (timers, idle callbacks)
        while True:
            m = b.read(end)
            if m is None:
                break
            if 'method' in m:
                b.events.append(m)
    except RuntimeError as e:
        print('browser: %s' % e, file=sys.stderr)
        return 2
    finally:
        b.close()
    seen, order = {}, []
    for e in b.events:
        p = e.get('params', {})
        if e['method'] == 'Network.requestWillBeSent':
            rid = p['requestId']
            if rid not in seen:
                order.append(rid)
            seen[rid] = [p['request']['url'], p.get('type', '?'), '-']
        elif e['method'] == 'Network.loadingFailed' and p.get('requestId') in seen:
            seen[p['requestId']][2] = p.get('blockedReason') or p.get('errorText') or 'failed'
    for rid in order:
        print('\t'.join(seen[rid]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
