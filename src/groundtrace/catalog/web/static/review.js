// Keyboard shortcuts of the item page: a = approve, r = reject, n = next item (not while typing).
document.addEventListener("keydown", function (event) {
  var target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
  var id = {a: "approve", r: "reject", n: "next"}[event.key];
  var element = id && document.getElementById(id);
  if (!element) return;
  event.preventDefault();
  element.click();
});
