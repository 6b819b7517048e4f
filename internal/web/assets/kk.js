// kk browse: search as you type. The box asks this page's JSON endpoint
// (the same search kk search runs) after a short pause and lists the hits
// under the header; Enter still submits the form to the results page.
// Everything is built as DOM nodes from text: nothing a leaf holds is ever
// parsed as HTML.
(function () {
  "use strict";
  var box = document.getElementById("q");
  var panel = document.getElementById("results");
  if (!box || !panel || !window.fetch) {
    return;
  }
  var endpoint = box.getAttribute("data-endpoint");
  var timer = 0;
  var asked = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) {
      e.className = cls;
    }
    if (text) {
      e.textContent = text;
    }
    return e;
  }

  // snippet lays out the runs of a hit's snippet as text, the matched
  // words in <mark> (the page has already read the markdown and taken
  // the index's markers out).
  function snippet(parts) {
    var p = el("p", "snippet");
    for (var i = 0; i < parts.length; i++) {
      if (parts[i].mark) {
        p.appendChild(el("mark", "", parts[i].text));
      } else {
        p.appendChild(document.createTextNode(parts[i].text));
      }
    }
    return p;
  }

  function show(data) {
    panel.replaceChildren();
    var hits = (data && data.hits) || [];
    if (hits.length === 0) {
      panel.appendChild(el("p", "none", data && data.note ? "Nothing to look for: " + data.note : "No match."));
    } else {
      var list = el("ol", "hits");
      hits.forEach(function (h) {
        var li = el("li", "hit");
        var a = el("a", "", h.title || h.id);
        a.href = h.url;
        li.appendChild(a);
        li.appendChild(document.createTextNode(" "));
        li.appendChild(el("span", "type", h.type));
        li.appendChild(document.createTextNode(" "));
        li.appendChild(el("code", "id", h.id));
        if (h.snippet_parts && h.snippet_parts.length) {
          li.appendChild(snippet(h.snippet_parts));
        } else if (h.description) {
          li.appendChild(el("p", "desc", h.description));
        }
        list.appendChild(li);
      });
      panel.appendChild(list);
    }
    panel.hidden = false;
  }

  function run() {
    var q = box.value.trim();
    var mine = ++asked;
    if (q === "") {
      panel.hidden = true;
      panel.replaceChildren();
      return;
    }
    fetch(endpoint + "?q=" + encodeURIComponent(q), { headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        if (mine === asked) {
          show(data);
        }
      })
      .catch(function () {});
  }

  box.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      panel.hidden = true;
    } else if (e.key === "/" && document.activeElement !== box) {
      e.preventDefault();
      box.focus();
    }
  });
})();
