/* Countersign chat widget loader.
 *
 *   <script src="https://countersign.example/widget.js"
 *           data-site="wst_…" data-token="<signed customer token>" async></script>
 *
 * Adds a launcher button and an iframe with the chat. The token (a short-lived
 * JWT your server signs with the site's key) is handed to the frame by
 * postMessage, only to Countersign's origin; it never appears in a URL.
 * window.CountersignWidget.open() / .close() / .setToken(token) are available
 * once this script ran.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) {
    console.error("Countersign widget: include widget.js with a <script src> tag");
    return;
  }
  var base = new URL(script.src).origin;
  var site = script.getAttribute("data-site") || "";
  var token = script.getAttribute("data-token") || "";
  var label = script.getAttribute("data-label") || "Chat with us";
  if (!/^[A-Za-z0-9_]{1,64}$/.test(site)) {
    console.error("Countersign widget: data-site must be your widget site id (wst_…)");
    return;
  }

  var root = document.createElement("div");
  root.setAttribute("data-countersign-widget", "");
  var s = root.style;
  s.position = "fixed";
  s.right = "16px";
  s.bottom = "16px";
  s.zIndex = "2147483000";
  s.display = "flex";
  s.flexDirection = "column";
  s.alignItems = "flex-end";
  s.gap = "8px";

  var frame = document.createElement("iframe");
  frame.id = "countersign-widget-frame";
  frame.title = "Chat";
  frame.src = base + "/widget/frame?site=" + encodeURIComponent(site);
  frame.hidden = true;
  var f = frame.style;
  f.border = "1px solid #c9ced6";
  f.borderRadius = "12px";
  f.boxShadow = "0 8px 28px rgba(0,0,0,.18)";
  f.background = "#fff";
  f.width = "min(380px, calc(100vw - 32px))";
  f.height = "min(560px, calc(100vh - 96px))";

  var launcher = document.createElement("button");
  launcher.type = "button";
  launcher.textContent = label;
  launcher.setAttribute("aria-controls", frame.id);
  launcher.setAttribute("aria-expanded", "false");
  var b = launcher.style;
  b.font = "600 15px/1.2 system-ui, sans-serif";
  b.padding = "12px 18px";
  b.border = "0";
  b.borderRadius = "999px";
  b.background = "#1f4e8c";
  b.color = "#fff";
  b.cursor = "pointer";
  b.boxShadow = "0 4px 14px rgba(0,0,0,.2)";

  function open() {
    frame.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    frame.focus();
    post({ type: "countersign:focus" });
  }
  function close() {
    frame.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }
  function post(message) {
    if (frame.contentWindow) frame.contentWindow.postMessage(message, base);
  }
  function sendToken() {
    post({ type: "countersign:token", token: token });
  }

  launcher.addEventListener("click", function () {
    if (frame.hidden) open(); else close();
  });
  window.addEventListener("message", function (event) {
    if (event.origin !== base || event.source !== frame.contentWindow) return;
    var data = event.data || {};
    if (data.type === "countersign:ready") sendToken();
    else if (data.type === "countersign:close") close();
  });

  root.appendChild(frame);
  root.appendChild(launcher);
  (document.body || document.documentElement).appendChild(root);
  if (script.getAttribute("data-open") === "true") open();

  window.CountersignWidget = {
    open: open,
    close: close,
    /* A fresh token from your server, e.g. after the old one expired. */
    setToken: function (next) { token = String(next || ""); sendToken(); }
  };
})();
