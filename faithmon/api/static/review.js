// The review page's keys. On the desk, Enter leases the next item. On an item: s, u, c, n, p
// set the selected claim's verdict (supported, unsupported, contradicted, not verifiable,
// partial),
// x toggles its critical box, j/k or the arrow keys move between claims, Enter submits the
// labels (the server then leases the next item), Escape skips. The keys only tick the
// form's own radios and boxes: without this script the same form works by mouse. Nothing
// here reads trace text into HTML (the server has escaped it; this file adds no markup).
(function () {
  "use strict";
  var VERDICTS = {
    s: "supported", u: "unsupported", c: "contradicted", n: "not_verifiable", p: "partial"
  };
  var start = document.getElementById("start");
  var form = document.getElementById("labels");
  var claims = form ? Array.prototype.slice.call(form.querySelectorAll("fieldset.claim")) : [];
  var status = document.getElementById("review-status");
  var at = 0;
  var sent = false;

  function select(index) {
    if (!claims.length) { return; }
    at = Math.max(0, Math.min(claims.length - 1, index));
    claims.forEach(function (claim, n) {
      claim.classList.toggle("selected", n === at);
      if (n === at) { claim.setAttribute("aria-current", "true"); }
      else { claim.removeAttribute("aria-current"); }
    });
    claims[at].scrollIntoView({ block: "nearest" });
  }

  function unlabelled() {
    for (var n = 0; n < claims.length; n++) {
      if (!claims[n].querySelector("input[type=radio]:checked")) { return n; }
    }
    return -1;
  }

  function send(button) {
    if (sent) { return; }
    sent = true;
    form.requestSubmit(button);
  }

  function typing(target) {
    if (!target || !target.tagName) { return false; }
    return target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox");
  }

  function onItem(event) {
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (VERDICTS[key]) {
      var radio = claims[at].querySelector('input[type=radio][value="' + VERDICTS[key] + '"]');
      if (radio) { radio.checked = true; }
    } else if (key === "x") {
      var box = claims[at].querySelector("input[type=checkbox]");
      if (box) { box.checked = !box.checked; }
    } else if (key === "j" || key === "ArrowDown") {
      select(at + 1);
    } else if (key === "k" || key === "ArrowUp") {
      select(at - 1);
    } else if (key === "Enter") {
      var missing = unlabelled();
      if (missing >= 0) {
        select(missing);
        if (status) { status.textContent = "Label every claim first: claim " + missing + " has no verdict."; }
      } else {
        send(document.getElementById("submit"));
      }
    } else if (key === "Escape") {
      send(document.getElementById("skip"));
    } else {
      return;
    }
    event.preventDefault();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
    if (typing(event.target)) {
      // Typing a note: Escape leaves the box, every other key is the note's.
      if (event.key === "Escape") { event.target.blur(); event.preventDefault(); }
      return;
    }
    if (form && claims.length) {
      onItem(event);
    } else if (start && event.key === "Enter") {
      event.preventDefault();
      start.requestSubmit();
    }
  });

  if (form) {
    form.addEventListener("focusin", function (event) {
      var claim = event.target.closest ? event.target.closest("fieldset.claim") : null;
      if (claim) { select(claims.indexOf(claim)); }
    });
    form.addEventListener("click", function (event) {
      var claim = event.target.closest ? event.target.closest("fieldset.claim") : null;
      if (claim) { select(claims.indexOf(claim)); }
    });
    // Back to a page the browser kept: its form may be sent again.
    window.addEventListener("pageshow", function () { sent = false; });
    select(0);
  }
})();
