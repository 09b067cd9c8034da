// Filters: by rule, family and status, over the conformance table and the tests. No network.
(function () {
  var rule = document.getElementById('f-rule');
  var family = document.getElementById('f-family');
  var status = document.getElementById('f-status');
  var shown = document.getElementById('shown');
  function words(el, name) {
    var v = el.getAttribute(name);
    return v ? v.split(' ') : [];
  }
  function apply() {
    var r = rule.value.trim().toUpperCase();
    var f = family.value;
    var s = status.value;
    var rows = 0, tests = 0;
    document.querySelectorAll('[data-status]').forEach(function (el) {
      var rules = words(el, 'data-rules');
      var fams = words(el, 'data-families');
      var ok = (!r || rules.some(function (x) { return x.indexOf(r) === 0; })) &&
        (!f || fams.indexOf(f) >= 0) &&
        (!s || el.getAttribute('data-status') === s);
      el.classList.toggle('hidden', !ok);
      if (ok) { if (el.tagName === 'TR') { rows++; } else { tests++; } }
    });
    shown.textContent = rows + ' rules, ' + tests + ' tests shown';
  }
  [rule, family, status].forEach(function (el) {
    el.addEventListener('input', apply);
    el.addEventListener('change', apply);
  });
  var params = new URLSearchParams(window.location.search);
  if (params.get('rule')) { rule.value = params.get('rule'); }
  if (params.get('family')) { family.value = params.get('family'); }
  if (params.get('status')) { status.value = params.get('status'); }
  apply();
})();
