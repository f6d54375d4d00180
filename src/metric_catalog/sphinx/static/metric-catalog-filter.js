/*
 * Filters for the catalog index (docs/metrics/index.md).
 *
 * The page holds a plain table (so Sphinx search indexes it) and a
 * <div class="catalog-filter" data-filter-table="SELECTOR"> of <select
 * data-filter-column="owner|kind|stability">. This script copies each row's
 * owner/kind/stability cell text into data-owner/data-kind/data-stability,
 * hides the rows that do not match every chosen value, shows the count, and
 * keeps the choice in the query string (?owner=...&kind=...) so a filtered
 * view can be linked. Pages without a filter panel are left alone.
 */
(function () {
  "use strict";

  function normalise(text) {
    return text.replace(/\s+/g, " ").trim();
  }

  function setUp(panel) {
    var table = document.querySelector(panel.getAttribute("data-filter-table"));
    if (!table || !table.tHead || !table.tBodies.length) {
      return;
    }
    var columns = {};
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell, index) {
      columns[normalise(cell.textContent).toLowerCase()] = index;
    });
    var selects = Array.prototype.slice.call(
      panel.querySelectorAll("select[data-filter-column]")
    );
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    rows.forEach(function (row) {
      selects.forEach(function (select) {
        var column = select.getAttribute("data-filter-column");
        var cell = row.cells[columns[column]];
        row.setAttribute("data-" + column, cell ? normalise(cell.textContent) : "");
      });
    });
    var count = panel.querySelector(".catalog-filter-count");

    function apply() {
      var shown = 0;
      var params = new URLSearchParams(window.location.search);
      rows.forEach(function (row) {
        var match = selects.every(function (select) {
          var column = select.getAttribute("data-filter-column");
          return !select.value || row.getAttribute("data-" + column) === select.value;
        });
        row.hidden = !match;
        if (match) {
          shown += 1;
        }
      });
      selects.forEach(function (select) {
        var column = select.getAttribute("data-filter-column");
        if (select.value) {
          params.set(column, select.value);
        } else {
          params.delete(column);
        }
      });
      if (count) {
        count.textContent = shown + " of " + rows.length + " series";
      }
      var query = params.toString();
      try {
        window.history.replaceState(
          null,
          "",
          window.location.pathname + (query ? "?" + query : "") + window.location.hash
        );
      } catch (error) {
        // Some browsers refuse history changes on file:// pages; filtering still works.
      }
    }

    var initial = new URLSearchParams(window.location.search);
    selects.forEach(function (select) {
      var wanted = initial.get(select.getAttribute("data-filter-column"));
      var known = Array.prototype.some.call(select.options, function (option) {
        return option.value === wanted;
      });
      if (wanted && known) {
        select.value = wanted;
      }
      select.addEventListener("change", apply);
    });
    apply();
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".catalog-filter"), setUp);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
