/* Countersign chat widget frame. Runs inside the iframe that /widget.js
 * inserts. Signs in with the host's token (received by postMessage from the
 * registered origin only), then talks to the chat API with the widget
 * session as a bearer token. Every text from the chat is inserted with
 * textContent: agent and customer messages are hostile input. */
(function () {
  "use strict";
  var body = document.body;
  var site = body.getAttribute("data-site");
  var hostOrigin = body.getAttribute("data-host-origin");
  var storeKey = "countersign.widget." + site;
  var $ = function (id) { return document.getElementById(id); };
  var statusLine = $("status");
  var list = $("messages");
  var form = $("composer");
  var text = $("text");
  var send = $("send");
  var stop = $("stop");
  var sendNow = $("send-now");
  var addToTurn = $("add-to-turn");

  var session = null; // { session_token, expires_at, customer, conversation_id }
  var conversation = null;
  var proposals = {}; // id -> proposal view
  var live = null;
  var sending = false;
  // A reply is being written (this frame's or not).
  var busy = false;

  function say(message, isError) {
    statusLine.textContent = message;
    statusLine.classList.toggle("error", !!isError);
    statusLine.setAttribute("role", isError ? "alert" : "status");
    statusLine.hidden = !message;
  }

  function load() {
    try {
      var saved = JSON.parse(sessionStorage.getItem(storeKey) || "null");
      if (saved && Date.parse(saved.expires_at) > Date.now()) return saved;
    } catch (e) { /* storage unavailable or garbled: sign in again */ }
    return null;
  }
  function save() {
    try { sessionStorage.setItem(storeKey, JSON.stringify(session)); } catch (e) { /* optional */ }
  }
  function forget() {
    session = null;
    try { sessionStorage.removeItem(storeKey); } catch (e) { /* optional */ }
  }

  function errorMessage(response, fallback) {
    return response.json().then(
      function (b) { return (b && b.error && b.error.message) || fallback; },
      function () { return fallback; }
    );
  }

  function api(method, path, payload) {
    var init = {
      method: method,
      credentials: "omit",
      headers: { "Authorization": "Bearer " + session.session_token, "Accept": "application/json" }
    };
    if (payload !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    return fetch(path, init).then(function (response) {
      if (response.status === 401) {
        forget();
        form.hidden = true;
        askForToken();
        return errorMessage(response, "Your chat session ended.").then(function (m) {
          throw new Error(m);
        });
      }
      if (!response.ok) {
        return errorMessage(response, "The chat could not do that (" + response.status + ").")
          .then(function (m) { var e = new Error(m); e.status = response.status; throw e; });
      }
      return response.json();
    });
  }

  // --- signing in -------------------------------------------------------

  function askForToken() {
    if (window.parent === window) {
      say("Open this chat through the site's chat button.", true);
      return;
    }
    say("Signing you in…");
    window.parent.postMessage({ type: "countersign:ready" }, hostOrigin);
  }

  window.addEventListener("message", function (event) {
    if (event.origin !== hostOrigin || event.source !== window.parent) return;
    var data = event.data || {};
    if (data.type === "countersign:token") {
      if (session) return;
      exchange(String(data.token || ""));
    } else if (data.type === "countersign:focus") {
      if (!form.hidden) text.focus();
    }
  });

  function exchange(token) {
    if (!token) {
      say("This site did not provide a sign-in token, so the chat cannot start.", true);
      return;
    }
    fetch("/widget/sessions", {
      method: "POST",
      credentials: "omit",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ site_id: site, token: token })
    }).then(function (response) {
      if (!response.ok) {
        return errorMessage(response, "The chat could not sign you in.").then(function (m) {
          say("The chat could not sign you in: " + m, true);
        });
      }
      return response.json().then(function (opened) {
        session = opened;
        save();
        return start();
      });
    }).catch(function () {
      say("The chat is unreachable right now; check your connection and reload.", true);
    });
  }

  // --- the conversation -------------------------------------------------

  function start() {
    $("who").textContent = "Signed in as " + session.customer.display_name;
    var resume = session.conversation_id
      ? api("GET", "/api/v1/conversations/" + encodeURIComponent(session.conversation_id))
          .catch(function (e) { if (e.status === 404 || e.status === 403) return null; throw e; })
      : Promise.resolve(null);
    return resume.then(function (found) {
      return found || api("POST", "/api/v1/conversations", {});
    }).then(function (view) {
      session.conversation_id = view.id;
      save();
      form.hidden = false;
      say("");
      show(view);
      text.focus();
      listen();
    }).catch(function (e) { say(e.message, true); });
  }

  function refresh() {
    if (!session || !session.conversation_id) return Promise.resolve();
    return api("GET", "/api/v1/conversations/" + encodeURIComponent(session.conversation_id))
      .then(show)
      .catch(function (e) { say(e.message, true); });
  }

  function show(view) {
    conversation = view;
    followRunningTurn(view);
    list.textContent = "";
    if (!view.messages.some(function (m) { return m.role === "user"; })) list.appendChild(greeting());
    view.messages.forEach(function (m) {
      if (m.role !== "user" && m.role !== "assistant") return;
      if (m.role === "assistant" && !m.text) return;
      var item = document.createElement("li");
      // A person from the team writes under their name; "handover" notes
      // say who joined or left.
      var note = m.agent === "handover";
      var person = m.agent && m.agent.indexOf("person:") === 0;
      item.className = "message " + (note ? "note" : person ? "assistant person" : m.role);
      if (m.agent) item.setAttribute("data-agent", m.agent);
      var who = document.createElement("span");
      who.className = "speaker";
      who.textContent = m.role === "user" ? "You" : person ? m.agent.slice(7) : agentName(m.agent);
      var words = document.createElement("p");
      words.className = "text";
      // The customer reads replies without citation tags ([order:4831]).
      words.textContent = m.role === "assistant" ? plainCitations(m.text) : m.text;
      if (!note) item.appendChild(who);
      item.appendChild(words);
      list.appendChild(item);
    });
    if (view.running && view.message_being_answered && !sending) {
      list.appendChild(userLine(view.message_being_answered));
    }
    // Messages sent while a reply was written: waiting for the next turn,
    // or cancelled by Stop (never sent to the assistant).
    // What Stop cancelled shows until a later message is answered.
    var queue = view.queue || [];
    var answeredAfter = -1;
    queue.forEach(function (q, at) { if (q.state !== "waiting" && q.state !== "cancelled") answeredAfter = at; });
    queue.forEach(function (q, at) {
      if (q.state !== "waiting" && !(q.state === "cancelled" && at > answeredAfter)) return;
      var line = userLine(q.text);
      line.setAttribute("data-queued", q.state);
      var fate = document.createElement("p");
      fate.className = "fate";
      fate.textContent = q.state === "cancelled" ? "Cancelled by Stop: not sent to the assistant."
        : q.priority === "now" ? "Sent now: the reply in progress stops, this comes next."
        : q.priority === "this_turn" ? "For this reply: read before its next step."
        : "Waiting: read when the current reply is done.";
      line.appendChild(fate);
      list.appendChild(line);
    });
    view.proposals.forEach(function (link) {
      var card = document.createElement("li");
      card.className = "proposal";
      card.setAttribute("data-proposal", link.proposal_id);
      list.appendChild(card);
      renderProposal(card, link, proposals[link.proposal_id]);
      loadProposal(link);
    });
    list.scrollTop = list.scrollHeight;
  }

  // The frame is hidden until the host page opens the chat: the newest
  // message is scrolled to again once it has a size.
  window.addEventListener("resize", function () { list.scrollTop = list.scrollHeight; });

  /** Citation tags such as " [order:4831]" taken out of an agent's reply. */
  function plainCitations(text) {
    return (text || "").replace(/ *\[[a-z0-9_-]+:[^\s\]]+\]/g, "");
  }

  /** A first hello with examples that fill the field when chosen. */
  function greeting() {
    var item = document.createElement("li");
    item.className = "message note greeting";
    item.setAttribute("data-testid", "greeting");
    var hello = document.createElement("p");
    hello.textContent = "Hello! Ask about one of your orders or our policies. For example:";
    item.appendChild(hello);
    ["Where is my refund?", "I'd like a refund for an order", "What is your returns policy for unopened items?"].forEach(function (example) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "widget-example";
      button.textContent = example;
      button.addEventListener("click", function () { text.value = example; text.focus(); });
      item.appendChild(button);
    });
    return item;
  }

  // A turn running without this frame waiting on it (started before a
  // reload, or for messages that waited) keeps Stop on and "Send now"
  // offered, and is followed until it ends and nothing waits.
  var following = null;
  function followRunningTurn(view) {
    if (sending) return;
    var waiting = (view.queue || []).some(function (q) { return q.state === "waiting"; });
    running(view.running || waiting);
    // What the last reply ended with ("Stopped.") stays until a turn runs.
    if (view.running || waiting) say("Working on it…");
    else if (statusLine.textContent === "Working on it…") say("");
    clearTimeout(following);
    if (view.running || waiting) following = setTimeout(refresh, 1000);
  }

  // While a reply is written, Send queues the message for after it and
  // "Send now" stops the reply for it; Stop stops everything.
  function running(yes) {
    busy = yes;
    send.textContent = yes ? "Send (after this reply)" : "Send";
    sendNow.hidden = !yes;
    addToTurn.hidden = !yes;
    stop.hidden = !yes;
  }

  function userLine(message) {
    var mine = document.createElement("li");
    mine.className = "message user";
    var who = document.createElement("span");
    who.className = "speaker";
    who.textContent = "You";
    var words = document.createElement("p");
    words.className = "text";
    words.textContent = message;
    mine.appendChild(who);
    mine.appendChild(words);
    return mine;
  }

  function agentName(agent) {
    if (!agent) return "Assistant";
    return agent.replace(/_/g, " ").replace(/^./, function (c) { return c.toUpperCase(); });
  }

  function loadProposal(link) {
    api("GET", "/api/v1/proposals/" + encodeURIComponent(link.proposal_id)).then(function (detail) {
      proposals[link.proposal_id] = detail.proposal;
      var card = list.querySelector('[data-proposal="' + CSS.escape(link.proposal_id) + '"]');
      if (card) renderProposal(card, link, detail.proposal);
    }).catch(function () { /* the card keeps its last known state */ });
  }

  function renderProposal(card, link, p) {
    card.textContent = "";
    var title = document.createElement("strong");
    title.textContent = p
      ? "Refund of " + p.amount_display + " for order " + p.order_id
      : "Refund proposal for order " + link.order_id;
    var state = document.createElement("p");
    state.className = "status";
    state.setAttribute("data-status", p ? p.status : "loading");
    state.textContent = p ? p.status_label : "Loading…";
    var note = document.createElement("p");
    note.className = "note";
    note.textContent = "A person reviews every refund before anything is paid.";
    card.appendChild(title);
    card.appendChild(state);
    card.appendChild(note);
  }

  function post(message, priority) {
    return api("POST", "/api/v1/conversations/" + encodeURIComponent(session.conversation_id) + "/messages",
        { text: message, priority: priority });
  }

  // A message while a reply is written is stored and waits (202); the
  // transcript and its queue come back from the server.
  function queue(priority) {
    var message = text.value.trim();
    if (!message || !session) return;
    text.value = "";
    send.disabled = true;
    post(message, priority)
      .catch(function (e) { text.value = text.value || message; say(e.message, true); })
      .then(function () { send.disabled = false; return refresh(); });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var message = text.value.trim();
    if (!message || !session) return;
    if (sending || busy) return queue("later");
    sending = true;
    running(true);
    say("Working on it…");
    // Show the message at once; the transcript from the server replaces it.
    list.appendChild(userLine(message));
    text.value = "";
    post(message, "later")
      .then(function (turn) {
        say(turn.outcome === "stopped" ? "Stopped." : "");
        return refresh();
      })
      .catch(function (e) {
        say(e.message, true);
        return refresh();
      })
      .then(function () {
        sending = false;
        followRunningTurn(conversation || { running: false });
        text.focus();
      });
  });

  sendNow.addEventListener("click", function () { queue("now"); });
  addToTurn.addEventListener("click", function () { queue("this_turn"); });

  text.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  $("person").addEventListener("click", function () {
    if (!session || !session.conversation_id) return;
    var button = $("person");
    button.disabled = true;
    api("POST", "/api/v1/conversations/" + encodeURIComponent(session.conversation_id) + "/handover")
      .then(function () { return refresh(); })
      .catch(function (e) { say(e.message, true); })
      .then(function () { button.disabled = false; });
  });

  stop.addEventListener("click", function () {
    if (!session) return;
    stop.disabled = true;
    api("POST", "/api/v1/conversations/" + encodeURIComponent(session.conversation_id) + "/stop")
      .catch(function (e) { say(e.message, true); })
      .then(function () { stop.disabled = false; return refresh(); });
  });

  // --- live proposal states (server-sent events over fetch, with the bearer) ---

  function listen() {
    if (live || !session) return;
    var controller = new AbortController();
    live = controller;
    fetch("/api/live/proposals", {
      credentials: "omit",
      headers: { "Authorization": "Bearer " + session.session_token, "Accept": "text/event-stream" },
      signal: controller.signal
    }).then(function (response) {
      if (!response.ok || !response.body) throw new Error("live updates unavailable");
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) throw new Error("stream ended");
          buffer += decoder.decode(chunk.value, { stream: true });
          var events = buffer.split("\n\n");
          buffer = events.pop();
          events.forEach(handleEvent);
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      live = null;
      // Reconnect while signed in; a page left open keeps updating.
      if (session) setTimeout(function () { listen(); refresh(); }, 3000);
    });
  }

  function handleEvent(raw) {
    var kind = "message";
    var data = "";
    raw.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) kind = line.slice(6).trim();
      else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
    });
    if (kind === "resync") { refresh(); return; }
    // A person joined, wrote in or left this chat.
    if (kind === "conversation") {
      try {
        if (conversation && JSON.parse(data).conversation_id === conversation.id) refresh();
      } catch (e) { /* ignore a garbled event */ }
      return;
    }
    if (kind !== "proposal" || !conversation) return;
    try {
      var change = JSON.parse(data);
      conversation.proposals.forEach(function (link) {
        if (link.proposal_id === change.proposal_id) loadProposal(link);
      });
    } catch (e) { /* ignore a garbled event */ }
  }

  // --- keyboard -----------------------------------------------------------

  $("close").addEventListener("click", function () {
    window.parent.postMessage({ type: "countersign:close" }, hostOrigin);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") window.parent.postMessage({ type: "countersign:close" }, hostOrigin);
  });

  session = load();
  if (session) start(); else askForToken();
})();
