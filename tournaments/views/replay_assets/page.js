// gin replay page. Reads the replay from the JSON block in the page; touches no network.
// Every text from the log goes in with textContent, never as HTML.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  const SPEEDS = [0.5, 1, 2, 4, 8, 16, 32];
  const state = { step: 0, view: 0, playing: false, speed: 2, timer: null };
  const $ = (id) => document.getElementById(id);

  // The page's JSON is written small: a run of cards is one string of two-character codes
  // ("AsKd"); a view's table at a step holds only what changed since that view's step before
  // (no table: unchanged; a seat's hand null: unchanged); a view's text or table that is an
  // earlier view's of the same step is that view's number. Every table is rebuilt whole once,
  // when the page loads.
  function codes(text) {
    const found = [];
    for (let i = 0; i + 1 < text.length; i += 2) found.push(text.slice(i, i + 2));
    return found;
  }

  function handOfPatch(hand) {
    const whole = Object.assign({}, hand);
    if (typeof whole.cards === "string") whole.cards = codes(whole.cards);
    if (typeof whole.known === "string") whole.known = codes(whole.known);
    return whole;
  }

  function showdownOfPatch(s) {
    if (s === null) return null;
    return Object.assign({}, s, {
      kMelds: s.kMelds.map(codes), kDead: codes(s.kDead), dMelds: s.dMelds.map(codes),
      dDead: codes(s.dDead), layoffs: s.layoffs.map((layoff) => [codes(layoff[0]), codes(layoff[1])]),
    });
  }

  function patched(table, patch) {
    if (patch === null) return null;
    const next = Object.assign({}, table || {}, patch);
    if ("pile" in patch) next.pile = codes(patch.pile);
    if ("stock" in patch) next.stock = patch.stock === null ? null : codes(patch.stock);
    if ("showdown" in patch) next.showdown = showdownOfPatch(patch.showdown);
    if ("hands" in patch) {
      next.hands = patch.hands.map((hand, seat) =>
        hand === null ? table.hands[seat] : Object.assign({}, table ? table.hands[seat] : {}, handOfPatch(hand)));
    }
    return next;
  }

  DATA.steps.forEach((step) => {
    step.v.forEach((seen) => {
      if (typeof seen.text === "number") seen.text = step.v[seen.text].text;
      if (typeof seen.table === "number") seen.table = step.v[seen.table].table;
    });
  });
  DATA.views.forEach((_, index) => {
    let table = null;
    DATA.steps.forEach((step) => {
      const seen = step.v[index];
      if ("table" in seen) table = patched(table, seen.table);
      seen.table = table;
    });
  });

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function card(code, extra) {
    const rank = code[0] === "T" ? "10" : code[0];
    const suit = code[1];
    const node = el("div", "card" + (suit === "d" || suit === "h" ? " red" : "") + (extra ? " " + extra : ""));
    node.title = code;
    node.dataset.card = code;
    node.append(el("span", "rank", rank), el("span", "suit", SUITS[suit]));
    return node;
  }

  function back(extra) {
    const node = el("div", "card back" + (extra ? " " + extra : ""));
    node.title = "face down";
    return node;
  }

  function fill(node, children) {
    node.replaceChildren(...children);
  }

  function seatBox(table, seat, view) {
    const hand = table.hands[seat];
    const box = el("div", "seat");
    box.id = "seat-" + seat;
    const name = el("div", "name", DATA.names[seat]);
    if (view.seat === seat) name.append(el("span", "tag", "you"));
    if (table.dealer === seat) name.append(el("span", "tag", "dealer"));
    if (table.toMove === seat && !table.showdown) name.append(el("span", "tag move", "to move"));
    if (hand.deadwood !== null) name.append(el("span", "deadwood", "deadwood " + hand.deadwood));
    const cards = el("div", "cards");
    cards.id = "hand-" + seat;
    if (hand.cards !== null) {
      cards.append(...hand.cards.map((code) => card(code)));
    } else {
      cards.append(...hand.known.map((code) => card(code, "known")));
      for (let i = hand.known.length; i < hand.count; i++) cards.append(back());
    }
    box.append(name, cards);
    return box;
  }

  function middle(table) {
    const row = el("div", "middle");
    const pile = el("div", "pile");
    pile.append(el("div", "label", "discard pile (" + table.pile.length + ")"));
    const pileCards = el("div", "cards");
    pileCards.id = "pile";
    const shown = table.pile.slice(-16);
    shown.forEach((code, i) => pileCards.append(card(code, i === shown.length - 1 ? "top" : "")));
    pile.append(pileCards);
    const stock = el("div", "stock");
    stock.append(el("div", "label", "stock"));
    const stockCards = el("div", "cards");
    stockCards.id = "stock";
    if (table.stock !== null) {
      table.stock.forEach((code) => stockCards.append(card(code, "small")));
    } else if (table.stockCount > 0) {
      stockCards.append(back());
    }
    stock.append(stockCards, el("div", "count", table.stockCount + " cards"));
    row.append(pile, stock);
    return row;
  }

  function meldGroup(cards, kind) {
    const group = el("span", "meld" + (kind ? " " + kind : ""));
    cards.forEach((code) => group.append(card(code, "small")));
    return group;
  }

  function showdownPanel(showdown) {
    const panel = el("div", "panel showdown");
    panel.id = "showdown";
    panel.append(el("h2", null, "showdown"));
    if (showdown.knocker === null) {
      panel.append(el("div", "line", showdown.drawn));
      return panel;
    }
    const knocker = showdown.knocker;
    const first = el("div", "line");
    first.append(el("div", null, DATA.names[knocker] + " — " + showdown.end + ", deadwood " + showdown.kDeadwood));
    showdown.kMelds.forEach((meld) => first.append(meldGroup(meld)));
    if (showdown.kDead.length) first.append(meldGroup(showdown.kDead, "deadwood"));
    const second = el("div", "line");
    second.append(el("div", null, DATA.names[1 - knocker] + " — deadwood " + showdown.dDeadwood));
    showdown.dMelds.forEach((meld) => second.append(meldGroup(meld)));
    showdown.layoffs.forEach((layoff) => second.append(meldGroup(layoff[0], "layoff")));
    if (showdown.dDead.length) second.append(meldGroup(showdown.dDead, "deadwood"));
    const points = el("div", "points", showdown.scores);
    panel.append(first, second, points);
    return panel;
  }

  function scoreSheet(table) {
    const sheet = el("table", "score");
    sheet.id = "score";
    const head = el("tr");
    head.append(el("th", null, "player"));
    for (let g = 0; g < table.totals[0].length; g++) head.append(el("th", null, "game " + (g + 1)));
    sheet.append(head);
    for (const seat of [0, 1]) {
      const row = el("tr");
      row.append(el("td", null, DATA.names[seat]));
      table.totals[seat].forEach((total, g) => row.append(el("td", table.winners[g] === seat ? "won" : "", String(total))));
      sheet.append(row);
    }
    return sheet;
  }

  function playLog(index) {
    const step = DATA.steps[index];
    const list = el("ol", "log");
    list.id = "log";
    let first = index;
    while (first > 0 && DATA.steps[first - 1].hand === step.hand) first--;
    for (let i = first; i <= index; i++) {
      const seen = DATA.steps[i].v[state.view];
      const time = seen.ms !== null ? "  (" + seen.ms.toFixed(1) + " ms)" : "";
      const item = el("li", (i === index ? "current " : "") + DATA.steps[i].kind, seen.text + time);
      item.value = i + 1;
      list.append(item);
    }
    return list;
  }

  function render() {
    const step = DATA.steps[state.step];
    const view = DATA.views[state.view];
    const shown = step.v[state.view];
    const table = shown.table;
    $("where").textContent =
      (step.hand >= 0 ? "hand " + (step.hand + 1) + " of " + DATA.hands.length : "before the deal") +
      " · step " + (state.step + 1) + "/" + DATA.steps.length;
    $("slider").value = String(state.step);
    $("hand-select").value = String(Math.max(0, step.hand));
    $("play").textContent = state.playing ? "\u2016 pause" : "\u25b6 play"; // U+23F8 is a box in many fonts
    $("play").classList.toggle("on", state.playing);
    const event = $("event");
    event.className = "event " + step.kind;
    event.textContent = shown.text + (shown.ms !== null ? "  (" + shown.ms.toFixed(1) + " ms)" : "");
    const felt = $("felt");
    if (table === null) {
      fill(felt, [el("div", null, "no hand was dealt")]);
    } else {
      const bottom = view.seat === null ? 0 : view.seat;
      fill(felt, [seatBox(table, 1 - bottom, view), middle(table), seatBox(table, bottom, view)]);
    }
    fill($("score-panel"), [el("h2", null, "score sheet"), table === null ? el("div") : scoreSheet(table)]);
    const side = [el("h2", null, "play")].concat([playLog(state.step)]);
    fill($("log-panel"), side);
    follow($("log"));
    const end = step.kind === "result";
    const slot = table !== null && table.showdown && (step.kind === "showdown" || end) ? [showdownPanel(table.showdown)] : [];
    if (end && DATA.summary.length) slot.push(seriesPanel());
    fill($("showdown-slot"), slot);
    link();
  }

  // The play log keeps its current step in sight, however long the hand.
  function follow(list) {
    const current = list.querySelector("li.current");
    if (current) list.scrollTop = Math.max(0, current.offsetTop - list.clientHeight + 2 * current.offsetHeight);
  }

  function seriesPanel() {
    const panel = el("div", "panel series");
    panel.id = "series";
    panel.append(el("h2", null, "the series"));
    DATA.summary.forEach((line) => panel.append(el("div", "line", line)));
    return panel;
  }

  // Deep links: #hand=5&step=3 (the 3rd step of hand 5) or #step=42; the address follows the page.
  function link() {
    const hand = handOf(state.step);
    const where = hand < 0 ? "#step=" + (state.step + 1) : "#hand=" + (hand + 1) + "&step=" + (state.step - DATA.hands[hand] + 1);
    if (location.hash === where) return;
    try {
      history.replaceState(null, "", where);
    } catch (error) {
      // A page without an address of its own (a notebook's srcdoc iframe) cannot rewrite it.
    }
  }

  function linked() {
    const query = new URLSearchParams(location.hash.replace(/^#/, ""));
    const step = Number(query.get("step"));
    const hand = Number(query.get("hand"));
    if (!Number.isInteger(step) || step < 1) return null;
    if (query.has("hand")) {
      if (!Number.isInteger(hand) || hand < 1 || hand > DATA.hands.length) return null;
      return DATA.hands[hand - 1] + step - 1;
    }
    return step - 1;
  }

  function go(index) {
    state.step = Math.max(0, Math.min(DATA.steps.length - 1, index));
    render();
  }

  function handOf(index) {
    let hand = -1;
    DATA.hands.forEach((start, h) => { if (start <= index) hand = h; });
    return hand;
  }

  function goHand(hand) {
    if (hand >= 0 && hand < DATA.hands.length) go(DATA.hands[hand]);
  }

  function schedule() {
    clearTimeout(state.timer);
    if (!state.playing) return;
    state.timer = setTimeout(() => {
      if (state.step >= DATA.steps.length - 1) { state.playing = false; render(); return; }
      go(state.step + 1);
      schedule();
    }, 1000 / SPEEDS[state.speed]);
  }

  function togglePlay() {
    if (!state.playing && state.step >= DATA.steps.length - 1) state.step = 0;
    state.playing = !state.playing;
    render();
    schedule();
  }

  function setup() {
    document.title = "gin replay: " + DATA.title;
    $("title").textContent = DATA.title + ": " + DATA.names[0] + " vs " + DATA.names[1];
    const slider = $("slider");
    slider.max = String(DATA.steps.length - 1);
    slider.addEventListener("input", () => go(Number(slider.value)));
    const handSelect = $("hand-select");
    DATA.hands.forEach((start, h) => {
      const option = el("option", null, "hand " + (h + 1));
      option.value = String(h);
      handSelect.append(option);
    });
    handSelect.addEventListener("change", () => goHand(Number(handSelect.value)));
    const viewSelect = $("view-select");
    DATA.views.forEach((view, i) => {
      const option = el("option", null, view.name);
      option.value = String(i);
      viewSelect.append(option);
    });
    viewSelect.disabled = DATA.views.length < 2;
    viewSelect.addEventListener("change", () => { state.view = Number(viewSelect.value); render(); });
    const speedSelect = $("speed");
    SPEEDS.forEach((speed, i) => {
      const option = el("option", null, speed + " steps/s");
      option.value = String(i);
      speedSelect.append(option);
    });
    speedSelect.value = String(state.speed);
    speedSelect.addEventListener("change", () => { state.speed = Number(speedSelect.value); schedule(); });
    $("first").addEventListener("click", () => go(0));
    $("prev-hand").addEventListener("click", () => goHand(handOf(state.step) - 1));
    $("prev").addEventListener("click", () => go(state.step - 1));
    $("play").addEventListener("click", togglePlay);
    $("next").addEventListener("click", () => go(state.step + 1));
    $("next-hand").addEventListener("click", () => goHand(handOf(state.step) + 1));
    $("last").addEventListener("click", () => go(DATA.steps.length - 1));
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement) return;
      const keys = {
        ArrowRight: () => go(state.step + 1),
        ArrowLeft: () => go(state.step - 1),
        ArrowDown: () => goHand(handOf(state.step) + 1),
        ArrowUp: () => goHand(handOf(state.step) - 1),
        Home: () => go(0),
        End: () => go(DATA.steps.length - 1),
        " ": togglePlay,
      };
      if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
    });
    window.addEventListener("hashchange", () => { const target = linked(); if (target !== null) go(target); });
    const target = linked();
    if (target !== null) state.step = Math.max(0, Math.min(DATA.steps.length - 1, target));
    render();
    document.body.dataset.ready = "true";
  }

  setup();
})();
