// The page of the web table: it shows what the server sends and sends the clicks back.
// Every rule lives on the server (mendikot_env.web); nothing here decides what is legal.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let game = null;   // {game, seat, token}
let view = null;   // the last view of our seat
let poll = null;   // timer that asks for the view while others play
let options = null;
let replay = null; // {replay, record, step, seat}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : {"Content-Type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({detail: response.statusText}));
  if (!response.ok) {
    $("error").textContent = data.detail || String(response.status);
    throw new Error(data.detail);
  }
  $("error").textContent = "";
  return data;
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function showTab(name) {
  for (const tab of ["play", "replay", "settings"]) $(tab).hidden = tab !== name;
  $("show-play").classList.toggle("on", name === "play");
  $("show-replay").classList.toggle("on", name === "replay");
}

// ------------------------------------------------------------------ settings

async function loadOptions() {
  options = await api("GET", "/api/options");
  for (const name of Object.keys(options.presets)) $("preset").append(el("option", {value: name}, name));
  for (const [field, choices] of Object.entries(options.choices)) {
    const select = el("select", {name: field});
    select.append(el("option", {value: ""}, "(preset)"));
    for (const choice of choices) select.append(el("option", {value: String(choice)}, String(choice)));
    const label = el("label", {}, field + " ");
    label.append(select);
    $("rule-fields").append(label);
  }
  const target = el("label", {}, "target ");
  target.append(el("input", {name: "target", type: "number", min: "1", placeholder: "(preset)"}));
  $("rule-fields").append(target);
  for (const name of options.agents) $("agent-names").append(el("option", {value: name}));
}

function settingsFromForm() {
  const form = new FormData($("settings-form"));
  const rules = {preset: form.get("preset")};
  for (const field of [...Object.keys(options.choices), "target"]) {
    const value = form.get(field);
    if (value) rules[field] = /^\d+$/.test(value) ? Number(value) : value;
  }
  const settings = {rules, seat: Number(form.get("seat") || 0),
    partner: form.get("partner") || "hard", opponents: form.get("opponents") || "hard"};
  const players = (form.get("players") || "").trim();
  if (players) settings.players = players.split(",").map((p) => p.trim());
  if (form.get("seed")) settings.seed = Number(form.get("seed"));
  return settings;
}

function settingsFromUrl() {
  const rules = {preset: params.get("preset") || "standard"};
  for (const field of ["n_players", "trump", "reveal", "collection", "rotation", "scoring", "target", "direction"]) {
    const value = params.get(field);
    if (value) rules[field] = /^\d+$/.test(value) ? Number(value) : value;
  }
  const settings = {rules, seat: Number(params.get("seat") || 0),
    partner: params.get("partner") || "hard", opponents: params.get("opponents") || "hard"};
  if (params.get("players")) settings.players = params.get("players").split(",");
  if (params.get("seed")) settings.seed = Number(params.get("seed"));
  return settings;
}

async function newGame(settings) {
  const made = await api("POST", "/api/games", settings);
  game = {game: made.game, seat: made.seat, token: made.token};
  history.replaceState(null, "", made.links[made.seat]);
  showFriends(made.links);
  showTab("play");
  await refresh();
}

function showFriends(links) {
  const others = Object.entries(links).filter(([seat]) => Number(seat) !== game.seat);
  $("friends").hidden = others.length === 0;
  $("friends").replaceChildren(el("b", {}, "Links for your friends (each opens one seat; keep them secret):"));
  for (const [seat, query] of others) {
    const line = el("div", {}, `Seat ${seat}: `);
    line.append(el("code", {class: "link"}, location.origin + "/" + query));
    $("friends").append(line);
  }
}

// ---------------------------------------------------------------------- play

function seatQuery() {
  return `seat=${game.seat}&token=${encodeURIComponent(game.token)}`;
}

async function refresh() {
  render(await api("GET", `/api/games/${game.game}?${seatQuery()}`));
}

async function act(action) {
  for (const button of document.querySelectorAll("#hand button, #ask")) button.disabled = true;
  $("status").textContent = "The others are playing...";
  render(await api("POST", `/api/games/${game.game}/act`, {seat: game.seat, token: game.token, action}));
}

function cardButton(card, svg, legal) {
  const button = el("button", {class: "card", "data-action": card, title: card});
  button.innerHTML = svg;
  button.disabled = !legal;
  button.addEventListener("click", () => act(card));
  return button;
}

function render(v) {
  view = v;
  document.body.dataset.phase = v.phase;
  document.body.dataset.version = v.version;
  $("table").innerHTML = v.svg;
  const hand = $("hand");
  hand.replaceChildren(...v.hand.map((card) => cardButton(card, v.cards[card], v.legal.includes(card))));
  if (v.face_down) {
    const down = cardButton(v.face_down, v.cards[v.face_down], false);
    down.classList.add("face-down");
    down.title = "your face-down card (the hidden trump)";
    hand.append(down);
  }
  $("ask").hidden = !v.can_ask;
  $("ask").disabled = !v.can_ask;
  $("hint").disabled = !v.your_turn;
  $("controls").hidden = v.phase === "over";
  $("hint-box").replaceChildren();
  $("status").textContent = statusText(v);
  renderSide(v);
  renderResult(v);
  clearTimeout(poll);
  if (!v.your_turn) poll = setTimeout(waitForOthers, 1000);  // another seat plays, or deals the next hand
}

function statusText(v) {
  if (v.phase === "over") return "The hand is over.";
  if (!v.your_turn) return `Waiting for ${v.names[v.to_act]}...`;
  if (v.phase === "hide") return "Choose the card to lay face down: its suit will be trump.";
  return v.can_ask ? "Your turn: play a card, or ask for the hidden trump." : "Your turn: click a card to play it.";
}

async function waitForOthers() {
  const v = await api("GET", `/api/games/${game.game}?${seatQuery()}`);
  if (v.version !== view.version) render(v);
  else poll = setTimeout(waitForOthers, 1000);
}

function count(k, noun) {
  return `${k} ${noun}${k === 1 ? "" : "s"}`;
}

function renderSide(v) {
  const mine = v.seat % 2;
  const last = v.last_trick;
  $("last-trick").replaceChildren(el("h3", {}, "Last trick"),
    el("p", {}, last ? last.cards.map(([s, c]) => `${v.names[s]}: ${c}`).join(", ") + ` (taken by ${v.names[last.winner]})` : "none yet"));
  $("score").replaceChildren(el("h3", {}, "Score"),
    el("p", {}, `Your team: ${count(v.tens[mine], "ten")}, ${count(v.tricks[mine], "trick")}. ` +
      `Theirs: ${count(v.tens[1 - mine], "ten")}, ${count(v.tricks[1 - mine], "trick")}.`),
    el("p", {}, `Trump: ${v.trump_text}. Match (hand ${v.hand_number}): you ${v.match.scores[mine]}, them ${v.match.scores[1 - mine]}, to ${v.match.target}.`));
  $("log").replaceChildren(...v.log.map((entry) => el("li", {}, `${v.names[entry.seat]}: ${entry.text}`)));
  $("log").scrollTop = $("log").scrollHeight;
}

function renderResult(v) {
  $("result").hidden = v.phase !== "over";
  if (v.phase !== "over") return;
  const r = v.result;
  const mine = v.seat % 2;
  let text = r.winner === null ? "Drawn hand." : r.winner === mine ? "Your team wins the hand!" : "The other team wins the hand.";
  text += ` Tens ${r.tens[mine]}-${r.tens[1 - mine]}, tricks ${r.tricks[mine]}-${r.tricks[1 - mine]}`;
  if (r.whitewash) text += " (whitewash)"; else if (r.mendikot) text += " (mendikot)";
  if (v.match.over) text += v.match.winner === mine ? ". Your team wins the match!" : v.match.winner === null ? ". The match is drawn." : ". The other team wins the match.";
  $("result-text").textContent = text;
  $("result").dataset.result = JSON.stringify(r);
  $("next").textContent = v.match.over ? "New match" : "Next hand";
  $("download").href = `/api/games/${game.game}/records/${v.hand_number}?${seatQuery()}`;
  $("download").setAttribute("download", `mendikot-${game.game}-hand${v.hand_number}.json`);
}

async function hint() {
  $("hint-box").textContent = "The search is thinking...";
  const answer = await api("POST", `/api/games/${game.game}/hint`, {seat: game.seat, token: game.token});
  const best = Math.max(...answer.values.map((row) => row.value));
  const table = el("table");
  table.append(el("caption", {}, "The search's value of each move for your team (mean points over sampled deals)"));
  for (const row of answer.values.sort((a, b) => b.value - a.value)) {
    const tr = el("tr", row.value === best ? {class: "best"} : {});
    tr.append(el("td", {}, row.action), el("td", {}, row.value.toFixed(3)));
    table.append(tr);
  }
  $("hint-box").replaceChildren(table);
}

// -------------------------------------------------------------------- replay

async function openReplay(named) {
  const made = await api("POST", "/api/replays", {records: named});
  replay = {replay: made.replay, record: 0, step: 0, seat: ""};
  $("record").replaceChildren(...made.records.map((name, i) => el("option", {value: String(i)}, name)));
  $("replay-controls").hidden = false;
  showTab("replay");
  await showStep(0);
}

async function readFiles(files) {
  const named = [];
  for (const file of files) {
    if (!file.name.endsWith(".json")) continue;
    const text = await file.text();
    try { named.push({name: file.webkitRelativePath || file.name, data: JSON.parse(text)}); }
    catch (error) { $("error").textContent = `${file.name}: not JSON (${error.message})`; return; }
  }
  await openReplay(named);
}

async function showStep(step) {
  replay.step = step;
  const q = `record=${replay.record}&step=${step}&seat=${replay.seat}`;
  const v = await api("GET", `/api/replays/${replay.replay}?${q}`);
  document.body.dataset.replayStep = v.step;
  $("replay-table").innerHTML = v.svg;
  $("step").max = v.steps;
  $("step").value = v.step;
  $("step-text").textContent = `step ${v.step} of ${v.steps}`;
  if ($("record").options.length !== v.records.length) {
    $("record").replaceChildren(...v.records.map((name, i) => el("option", {value: String(i)}, name)));
  }
  if ($("jump").options.length !== v.tricks.length) {
    $("jump").replaceChildren(...v.tricks.map((start, t) => el("option", {value: String(start)}, String(t + 1))));
  }
  $("jump").selectedIndex = v.trick;
  if ($("view-seat").options.length !== v.names.length + 1) {
    $("view-seat").replaceChildren(el("option", {value: ""}, "all hands"),
      ...v.names.map((_, s) => el("option", {value: String(s)}, `seat ${s}'s view`)));
  }
  $("events").replaceChildren(...v.events.map((text, i) => el("li", i === v.step - 1 ? {class: "now"} : {}, text)));
  renderBelief(v);
  $("search-values").replaceChildren();
  if (v.decision) {
    const button = el("button", {id: "search-button"}, "The search's value of each move");
    button.addEventListener("click", searchValues);
    $("search-values").append(button);
  }
}

function renderBelief(v) {
  const box = $("belief");
  box.replaceChildren();
  if (!v.belief) return;
  const b = v.belief;
  const table = el("table");
  table.append(el("caption", {}, `What ${v.names[v.seat]} believes: the chance that each seat holds each unseen card`));
  const head = el("tr");
  head.append(el("th", {}, "card"), ...b.seats.map((s) => el("th", {}, v.names[s])));
  if (b.face_down_slot) head.append(el("th", {}, "face down"));
  table.append(head);
  for (const row of b.cards) {
    const tr = el("tr");
    tr.append(el("td", {}, row.card));
    const shown = b.face_down_slot ? row.chances : row.chances.slice(0, b.seats.length);
    for (const p of shown) {
      const td = el("td", {}, p.toFixed(2));
      const bar = el("span", {class: "bar", style: `width:${Math.round(p * 30)}px`});
      td.append(bar);
      tr.append(td);
    }
    table.append(tr);
  }
  box.append(table);
  if (b.face_down_suits) {
    const suits = Object.entries(b.face_down_suits).map(([suit, p]) => `${suit} ${p.toFixed(2)}`).join(", ");
    box.append(el("p", {id: "face-down-suits"}, `The face-down card's suit: ${suits}`));
  }
}

async function searchValues() {
  $("search-values").textContent = "The search is thinking...";
  const q = `record=${replay.record}&step=${replay.step}&seat=${replay.seat}`;
  const answer = await api("GET", `/api/replays/${replay.replay}/search?${q}`);
  const best = Math.max(...answer.values.map((row) => row.value));
  const table = el("table");
  table.append(el("caption", {}, "The search's value of each legal move (mean points for the seat's team)"));
  for (const row of answer.values) {
    const tr = el("tr", row.value === best ? {class: "best"} : {});
    tr.append(el("td", {}, row.action), el("td", {}, row.value.toFixed(3)));
    table.append(tr);
  }
  $("search-values").replaceChildren(table);
}

// -------------------------------------------------------------------- wiring

function wire() {
  $("show-play").addEventListener("click", () => showTab("play"));
  $("show-replay").addEventListener("click", () => showTab("replay"));
  $("show-settings").addEventListener("click", () => showTab($("settings").hidden ? "settings" : "play"));
  $("settings-form").addEventListener("submit", (event) => { event.preventDefault(); newGame(settingsFromForm()); });
  $("ask").addEventListener("click", () => act("ASK"));
  $("hint").addEventListener("click", hint);
  $("next").addEventListener("click", async () =>
    render(await api("POST", `/api/games/${game.game}/next`, {seat: game.seat, token: game.token})));
  $("replay-hand").addEventListener("click", async () => {
    const record = await api("GET", `/api/games/${game.game}/records/${view.hand_number}?${seatQuery()}`);
    await openReplay([{name: `hand ${view.hand_number}`, data: record}]);
  });
  $("files").addEventListener("change", (event) => readFiles(event.target.files));
  $("folder").addEventListener("change", (event) => readFiles(event.target.files));
  $("record").addEventListener("change", () => { replay.record = Number($("record").value); showStep(0); });
  $("first").addEventListener("click", () => showStep(0));
  $("back").addEventListener("click", () => showStep(Math.max(0, replay.step - 1)));
  $("forward").addEventListener("click", () => showStep(Math.min(Number($("step").max), replay.step + 1)));
  $("last").addEventListener("click", () => showStep(Number($("step").max)));
  $("step").addEventListener("input", () => showStep(Number($("step").value)));
  $("jump").addEventListener("change", () => showStep(Number($("jump").value)));
  $("view-seat").addEventListener("change", () => { replay.seat = $("view-seat").value; showStep(replay.step); });
}

async function start() {
  wire();
  await loadOptions();
  if (params.get("replay")) {
    replay = {replay: params.get("replay"), record: 0, step: 0, seat: ""};
    $("replay-controls").hidden = false;
    showTab("replay");
    await showStep(0);
  } else if (params.get("game")) {
    game = {game: params.get("game"), seat: Number(params.get("seat")), token: params.get("token") || ""};
    await refresh();
  } else {
    await newGame(settingsFromUrl());
  }
}

start();
