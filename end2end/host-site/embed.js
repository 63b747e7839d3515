// A real host site renders the widget tag on its server, with a token it
// signs there for the signed-in customer (see the README). This static demo
// takes the same three values from the URL fragment, which never reaches a
// server log:
//   index.html#countersign=http://127.0.0.1:3000&site=wst_…&token=eyJ…
(function () {
  "use strict";
  var params = new URLSearchParams(location.hash.slice(1));
  var countersign = params.get("countersign");
  var site = params.get("site");
  var token = params.get("token");
  var status = document.getElementById("embed-status");
  if (!countersign || !site || !token) {
    status.textContent = "Add #countersign=…&site=…&token=… to the address to load the chat.";
    return;
  }
  var script = document.createElement("script");
  script.src = new URL("/widget.js", countersign).href;
  script.setAttribute("data-site", site);
  script.setAttribute("data-token", token);
  script.async = true;
  document.body.appendChild(script);
})();
