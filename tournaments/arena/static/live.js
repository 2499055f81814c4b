// The live page follows /events and updates its tables (text only: nothing is parsed as HTML).
"use strict";
(function () {
  if (!window.EventSource) { return; }
  var status = document.getElementById("live-status");
  var matches = document.getElementById("live-matches");
  var pairs = document.getElementById("live-pairs");
  function cell(row, text, href) {
    var td = document.createElement("td");
    if (href) {
      var a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.appendChild(a);
    } else {
      td.textContent = text;
    }
    row.appendChild(td);
  }
  function link(id) { return "/matches/" + encodeURIComponent(id).replace(/%40/g, "@").replace(/%7E/gi, "~"); }
  function clearEmpty(list) {
    var empty = list.querySelector(".empty");
    if (empty) { empty.remove(); }
  }
  function rowOf(id) {
    var rows = matches.querySelectorAll("tr");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].dataset.match === id) { return rows[i]; }
    }
    return null;
  }
  var source = new EventSource("/events");
  source.onopen = function () { status.textContent = "Following live."; };
  source.onerror = function () { status.textContent = "Reconnecting…"; };
  source.addEventListener("started", function (e) {
    var data = JSON.parse(e.data);
    if (rowOf(data.match)) { return; }
    clearEmpty(matches);
    var row = document.createElement("tr");
    row.dataset.match = data.match;
    cell(row, data.match, link(data.match));
    cell(row, data.seats[0] || "");
    cell(row, data.seats[1] || "");
    cell(row, new Date().toISOString().replace("T", " ").slice(0, 19) + " UTC");
    matches.appendChild(row);
  });
  source.addEventListener("finished", function (e) {
    var row = rowOf(JSON.parse(e.data).match);
    if (row) { row.remove(); }
  });
  source.addEventListener("pair", function (e) {
    var data = JSON.parse(e.data);
    clearEmpty(pairs);
    var li = document.createElement("li");
    li.appendChild(document.createTextNode(data.seats.join(" vs ") + ": "));
    data.matches.forEach(function (leg, i) {
      var a = document.createElement("a");
      a.href = link(leg);
      a.textContent = "leg " + (i + 1);
      li.appendChild(a);
      li.appendChild(document.createTextNode(" "));
    });
    pairs.insertBefore(li, pairs.firstChild);
  });
}());
