/*
 * The metric index (metric_catalog.sphinx): renders the table of every series from
 * _static/metric-catalog-data.js (window.metricCatalogIndexData, gzip + base64 of a
 * columnar JSON document) and filters it by owner, kind, stability and attribute, plus
 * a find box over the series name, logger key and Prometheus name. The choice lives in
 * the query string (?owner=...&kind=...&q=...) so a filtered view can be linked.
 *
 * On the search page (search.html?q=...) it lists the series whose name, logger key
 * (with or without its prefix) or Prometheus name matches the query, exact matches
 * first, each linking to the series' entry on its owner's page.
 *
 * Only matching rows are put in the table, 500 at a time ("Show more", "Show all"),
 * so a 10,000-row catalog loads and filters within a fraction of a second; .mc-ready
 * and .mc-complete mark the table as rendered.
 *
 * Every catalog value is escaped (esc) before it reaches markup. Timings go to
 * window.metricCatalogIndexTiming (milliseconds since navigation start) for the tests.
 * Pages without a .mc-index element are left alone.
 */
(function () {
  "use strict";

  var FILTERS = ["owner", "kind", "stability", "attribute"];
  var LABELS = { owner: "Owner", kind: "Kind", stability: "Stability", attribute: "Attribute" };
  var ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return ESCAPES[c];
    });
  }

  // An identifier: escaped, breakable only after ".", "_" and "/" (a part holding "-"
  // stays on one line: browsers would break after the hyphen).
  function ident(value) {
    var parts = esc(value).replace(/([._/])(?=.)/g, "$1<wbr>").split("<wbr>");
    return "<code>" + parts.map(function (part) {
      return part.indexOf("-") >= 0 ? '<span class="mc-nb">' + part + "</span>" : part;
    }).join("<wbr>") + "</code>";
  }

  function anchor(name) {
    return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  }

  function decode(packed) {
    var binary = atob(packed);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i += 1) {
      bytes[i] = binary.charCodeAt(i);
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // A page URI (from the site root) as a link from the page at root-relative dir.
  function link(root, dir, page) {
    return dir && page.indexOf(dir) === 0 ? page.slice(dir.length) : root + page;
  }

  function rowHtml(data, root, dir, row) {
    var file = data.files[row[1]] || { owner: "", module: "", page: "" };
    var page = link(root, dir, file.page);
    var unit = data.units[row[3]];
    return (
      "<tr><td><a href=\"" + esc(page + "#" + anchor(row[0])) + "\">" + ident(row[0]) + "</a>" +
      (row[7] ? ' <span class="mc-deprecated">deprecated</span>' : "") +
      '<div class="mc-prom" title="Prometheus name">' + ident(row[5]) + "</div>" +
      "</td><td>" + (row[6] ? row[6].split("\n").map(ident).join("<br>") : "<em>recorded</em>") +
      "</td><td><a href=\"" + esc(page) + "\" title=\"" + esc(file.owner) + "\">" +
      ident(file.module) + "</a>" +
      '</td><td><span class="mc-kind">' + esc(data.kinds[row[2]]).replace(/_/g, "_<wbr>") +
      "</span><br>" + (unit ? ident(unit) : "—") +
      "</td><td>" + esc(data.stabilities[row[4]]) +
      "</td><td>" + esc(row[8]) + "</td></tr>"
    );
  }

  function options(values, labels) {
    return values
      .slice()
      .sort()
      .map(function (v) {
        var label = labels && labels[v] ? labels[v] : v;
        return '<option value="' + esc(v) + '">' + esc(label) + "</option>";
      })
      .join("");
  }

  function setUp(panel, data) {
    var root = panel.getAttribute("data-root") || "";
    var dir = panel.getAttribute("data-dir") || "";
    var rows = data.rows;
    var tbody = panel.querySelector("tbody");
    var html = new Array(rows.length); // each row's markup, built when first shown
    var owners = [];
    var ownerLabels = {};
    data.files.forEach(function (f) {
      if (owners.indexOf(f.owner) < 0) {
        owners.push(f.owner);
        ownerLabels[f.owner] = f.module + " (" + f.owner + ")";
      }
    });
    var choices = {
      owner: owners,
      kind: data.kinds,
      stability: data.stabilities,
      attribute: data.attributes,
    };
    var selects = panel.querySelector(".mc-selects");
    selects.innerHTML = FILTERS.filter(function (name) {
      return choices[name].length > 0;
    })
      .map(function (name) {
        return (
          "<label>" + LABELS[name] + ' <select name="' + name + '" data-filter="' + name +
          '"><option value="">all</option>' +
          options(choices[name], name === "owner" ? ownerLabels : null) + "</select></label>"
        );
      })
      .join("");
    var inputs = Array.prototype.slice.call(panel.querySelectorAll("[data-filter]"));
    var count = panel.querySelector(".mc-count");
    var lower = rows.map(function (row) {
      return (row[0] + "\n" + row[6] + "\n" + row[5]).toLowerCase();
    });

    function value(name) {
      var input = panel.querySelector('[data-filter="' + name + '"]');
      return input ? input.value : "";
    }

    function markup(indexes, from, to) {
      var parts = [];
      for (var k = from; k < to; k += 1) {
        var i = indexes[k];
        if (html[i] === undefined) {
          html[i] = rowHtml(data, root, dir, rows[i]);
        }
        parts.push(html[i]);
      }
      return parts.join("");
    }

    // Only matching rows are in the table, PAGE at a time: a table of 10,000 rows takes
    // the browser seconds to lay out, 500 rows a few milliseconds.
    var matches = [];
    var shownRows = 0;
    var more = panel.querySelector(".mc-more");

    function showMore(all) {
      var end = all ? matches.length : Math.min(shownRows + PAGE, matches.length);
      tbody.insertAdjacentHTML("beforeend", markup(matches, shownRows, end));
      shownRows = end;
      var left = matches.length - shownRows;
      more.hidden = left === 0;
      more.querySelector(".mc-more-count").textContent =
        "Showing " + shownRows + " of " + matches.length + " matching series.";
      more.querySelector(".mc-more-page").textContent = "Show " + Math.min(PAGE, left) + " more";
      more.querySelector(".mc-more-all").textContent = "Show all " + matches.length;
    }

    more.querySelector(".mc-more-page").addEventListener("click", function () {
      showMore(false);
    });
    more.querySelector(".mc-more-all").addEventListener("click", function () {
      showMore(true);
    });

    function render(indexes) {
      matches = indexes;
      shownRows = 0;
      tbody.innerHTML = "";
      showMore(false);
      panel.classList.add("mc-complete");
    }

    function apply() {
      var owner = value("owner");
      var kind = data.kinds.indexOf(value("kind"));
      var stability = data.stabilities.indexOf(value("stability"));
      var attribute = data.attributes.indexOf(value("attribute"));
      var query = value("q").trim().toLowerCase();
      var indexes = [];
      for (var i = 0; i < rows.length; i += 1) {
        var row = rows[i];
        if (
          (!owner || (data.files[row[1]] || {}).owner === owner) &&
          (!value("kind") || row[2] === kind) &&
          (!value("stability") || row[4] === stability) &&
          (!value("attribute") || row[9].indexOf(attribute) >= 0) &&
          (!query || lower[i].indexOf(query) >= 0)
        ) {
          indexes.push(i);
        }
      }
      render(indexes);
      count.textContent = indexes.length + " of " + rows.length + " series";
      var params = new URLSearchParams(window.location.search);
      inputs.forEach(function (input) {
        var name = input.getAttribute("data-filter");
        if (input.value) {
          params.set(name, input.value);
        } else {
          params.delete(name);
        }
      });
      var search = params.toString();
      try {
        window.history.replaceState(
          null,
          "",
          window.location.pathname + (search ? "?" + search : "") + window.location.hash
        );
      } catch (error) {
        // Some browsers refuse history changes on file:// pages; filtering still works.
      }
    }

    var initial = new URLSearchParams(window.location.search);
    inputs.forEach(function (input) {
      var wanted = initial.get(input.getAttribute("data-filter"));
      if (wanted !== null) {
        if (input.tagName === "SELECT") {
          var known = Array.prototype.some.call(input.options, function (option) {
            return option.value === wanted;
          });
          if (known) {
            input.value = wanted;
          }
        } else {
          input.value = wanted;
        }
      }
      input.addEventListener(input.tagName === "SELECT" ? "change" : "input", function () {
        var start = performance.now();
        apply();
        window.metricCatalogIndexTiming.lastFilter = performance.now() - start;
      });
    });
    apply();
    panel.classList.add("mc-ready");
    window.metricCatalogIndexTiming.ready = performance.now();
  }

  // 0: exact name, logger key (with or without prefix) or Prometheus name; 1: one of them
  // starts with the query; 2: contains it; -1: no match.
  function rank(row, query) {
    var keys = row[6] ? row[6].toLowerCase().split("\n") : [];
    var fields = [row[0].toLowerCase(), row[5].toLowerCase()].concat(keys);
    keys.forEach(function (key) {
      if (key.indexOf("/") >= 0) {
        fields.push(key.slice(key.indexOf("/") + 1)); // the key without its prefix
      }
    });
    if (fields.indexOf(query) >= 0) {
      return 0;
    }
    if (fields.some(function (f) { return f && f.indexOf(query) === 0; })) {
      return 1;
    }
    return fields.some(function (f) { return f && f.indexOf(query) >= 0; }) ? 2 : -1;
  }

  var SEARCH_LIMIT = 50;
  var PAGE = 500;

  function searchResults(data, target) {
    var query = (new URLSearchParams(window.location.search).get("q") || "").trim();
    if (!query) {
      return;
    }
    var lower = query.toLowerCase();
    var found = [];
    data.rows.forEach(function (row) {
      var r = rank(row, lower);
      if (r >= 0) {
        found.push([r, row]);
      }
    });
    found.sort(function (a, b) {
      return a[0] - b[0] || (a[1][0] < b[1][0] ? -1 : 1);
    });
    var root = document.documentElement.getAttribute("data-content_root") || "";
    if (root === "./") {
      root = "";
    }
    var items = found.slice(0, SEARCH_LIMIT).map(function (hit) {
      var row = hit[1];
      var file = data.files[row[1]] || { module: "", page: "" };
      return (
        '<li><a href="' + esc(root + file.page + "#" + anchor(row[0])) + '">' + ident(row[0]) +
        "</a> in " + esc(file.module) + ": " +
        (row[6] ? "logger key " + row[6].split("\n").map(ident).join(" or ") + ", " : "recorded, ") +
        "Prometheus " + ident(row[5]) + '<p class="mc-search-description">' + esc(row[8]) +
        "</p></li>"
      );
    });
    var section = document.createElement("section");
    section.className = "mc-search mc-index";
    section.innerHTML =
      "<h2>Catalog series</h2><p>" +
      (found.length
        ? found.length + " series match <code>" + esc(query) + "</code>" +
          (found.length > SEARCH_LIMIT ? " (the first " + SEARCH_LIMIT + " shown)" : "") + "."
        : "No series matches <code>" + esc(query) + "</code>.") +
      "</p>" + (items.length ? '<ul class="mc-search-results">' + items.join("") + "</ul>" : "");
    target.parentNode.insertBefore(section, target);
    if (found.length) {
      explainNoPages(target, found.length);
    }
  }

  // Sphinx ends a search without page hits with "Your search did not match any
  // documents", which under the catalog series just listed reads as "nothing found".
  // Once Sphinx has written its summary (before or after the catalog data decodes),
  // say what it means here; a summary of page hits is left alone.
  var NO_PAGES =
    "Your search did not match any documents. Please make sure that all words are " +
    "spelled correctly and that you've selected enough categories.";

  function explainNoPages(target, count) {
    var done = function () {
      var summary = target.querySelector(".search-summary");
      var text = summary ? summary.textContent.trim() : "";
      if (!text) {
        return false; // Sphinx is still searching
      }
      var docs = window.Documentation;
      var none = docs && docs.gettext ? docs.gettext(NO_PAGES) : NO_PAGES;
      if (text === none) {
        summary.textContent =
          "No page's text matches this search; " +
          (count === 1 ? "the catalog series above matches" : "the catalog series above match") +
          " it by name, logger key or Prometheus name.";
      }
      return true;
    };
    if (done()) {
      return;
    }
    var observer = new MutationObserver(function () {
      if (done()) {
        observer.disconnect();
      }
    });
    observer.observe(target, { childList: true, subtree: true, characterData: true });
  }

  function start() {
    var results = document.getElementById("search-results");
    var panels = document.querySelectorAll(".mc-index");
    if (!panels.length && !results) {
      return;
    }
    window.metricCatalogIndexTiming = { start: performance.now() };
    var packed = window.metricCatalogIndexData;
    var failed = function (why) {
      Array.prototype.forEach.call(panels, function (panel) {
        panel.querySelector(".mc-count").textContent =
          "The index could not be loaded (" + why + "); every series is on its owner's page.";
      });
    };
    if (!panels.length && typeof packed !== "string") {
      return; // a search page of a site without a catalog index
    }
    if (typeof packed !== "string" || typeof DecompressionStream === "undefined") {
      failed(typeof packed !== "string" ? "no index data" : "this browser cannot decompress it");
      return;
    }
    decode(packed).then(function (data) {
      window.metricCatalogIndexTiming.decoded = performance.now();
      if (results) {
        searchResults(data, results);
      }
      Array.prototype.forEach.call(panels, function (panel) {
        setUp(panel, data);
      });
    }, function (error) {
      failed(String(error));
    });
  }

  // Deferred scripts run before DOMContentLoaded, the data script (in the page body) after
  // this one: start once the document is parsed, whichever event comes first.
  var started = false;
  function once() {
    if (!started) {
      started = true;
      start();
    }
  }
  if (document.readyState === "complete") {
    once();
  } else {
    document.addEventListener("DOMContentLoaded", once);
    window.addEventListener("load", once);
  }
})();
