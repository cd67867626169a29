// svc admin interface: small enhancements only; every page works without this file.
(function () {
  'use strict';

  // Copy buttons: <button data-copy="<id of the input, textarea or element>" hidden>.
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) resolve(); else reject(new Error('copy refused'));
    });
  }

  function statusNear(button) {
    var box = button.closest('.secret, .form-actions, dd, .field');
    return box ? box.querySelector('.copy-status') : null;
  }

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = 'value' in target && target.tagName !== 'CODE' ? target.value : target.textContent;
      var status = statusNear(button);
      copyText(text).then(
        function () { if (status) status.textContent = 'Copied to the clipboard.'; },
        function () {
          if (target.select) target.select();
          if (status) status.textContent = 'Copying was refused by the browser; the text is selected, press Ctrl+C (or Cmd+C).';
        },
      );
    });
  });

  // Forms that ask before doing something that cannot be undone.
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  });

  // Projections: live state, lag and rebuild progress from the admin API (the session cookie authenticates GETs).
  var table = document.getElementById('projections');
  if (table) {
    var live = document.getElementById('live-status');
    var fmt = function (n) { return Number(n).toLocaleString('en-GB'); };
    var running = function (p) { return p.rebuild && !p.rebuild.error && (p.rebuild.phase === 'building' || p.rebuild.phase === 'switching'); };
    var rebuildText = function (p) {
      var r = p.rebuild;
      if (!r) return 'Not rebuilt since the service started';
      if (r.error) return 'Rebuild failed: ' + r.error;
      var pct = r.head > 0 ? Math.min(100, Math.floor((r.position / r.head) * 100)) : 0;
      if (r.phase === 'building') {
        return 'Rebuilding: ' + fmt(r.processed) + ' events read, ' + pct + '% of the log' +
          (r.eventsPerSecond ? ', ' + fmt(Math.round(r.eventsPerSecond)) + ' events/s' : '') +
          (r.etaSeconds !== null && r.etaSeconds !== undefined ? ', about ' + Math.ceil(r.etaSeconds) + ' s left' : '');
      }
      if (r.phase === 'switching') return 'Switching the rebuilt read model in…';
      if (r.phase === 'done') return 'Rebuilt: ' + fmt(r.processed) + ' events read';
      return 'Rebuild interrupted after ' + fmt(r.processed) + ' events; start it again to resume';
    };
    var variants = { live: 'ok', failed: 'error', rebuilding: 'info', 'catching-up': 'info', starting: 'muted', stopped: 'muted' };
    var update = function (p) {
      var row = table.querySelector('tr[data-projection="' + CSS.escape(p.name) + '"]');
      if (!row) return;
      var cell = function (name) { return row.querySelector('[data-field="' + name + '"]'); };
      var state = cell('state');
      state.textContent = '';
      var badge = document.createElement('span');
      badge.className = 'badge' + (variants[p.state] ? ' badge-' + variants[p.state] : '');
      badge.textContent = p.state;
      state.appendChild(badge);
      if (p.lastError) {
        var err = document.createElement('div');
        err.className = 'error-text';
        err.textContent = p.lastError;
        state.appendChild(err);
      }
      cell('checkpoint').textContent = fmt(p.checkpoint);
      cell('head').textContent = fmt(p.head);
      cell('lag').textContent = fmt(p.lag);
      var box = cell('rebuild');
      var bar = box.querySelector('progress');
      if (running(p)) {
        if (!bar) {
          bar = document.createElement('progress');
          bar.setAttribute('aria-label', 'Rebuild progress of ' + p.name);
          box.insertBefore(bar, box.firstChild);
        }
        bar.max = Math.max(p.rebuild.head, 1);
        bar.value = p.rebuild.position;
      } else if (bar) {
        bar.remove();
      }
      box.querySelector('.rebuild-text').textContent = rebuildText(p);
    };
    var poll = function () {
      fetch('/api/admin/projections', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then(function (res) {
          if (res.status === 401) { window.location.assign('/admin/sign-in?expired=1'); throw new Error('signed out'); }
          if (!res.ok) throw new Error('HTTP ' + res.status);
          return res.json();
        })
        .then(function (body) {
          body.projections.forEach(update);
          var any = body.projections.some(running);
          table.setAttribute('data-live', any ? 'rebuilding' : 'idle');
          if (live) live.textContent = any ? 'A rebuild is running; this page updates itself.' : '';
          setTimeout(poll, any ? 700 : 3000);
        })
        .catch(function (e) {
          if (live && e.message !== 'signed out') live.textContent = 'Could not refresh the projections (' + e.message + '); retrying.';
          setTimeout(poll, 5000);
        });
    };
    setTimeout(poll, table.getAttribute('data-live') === 'rebuilding' ? 300 : 3000);
  }
})();
