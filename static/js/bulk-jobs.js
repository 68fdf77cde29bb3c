// The Bulk jobs page: while a job is queued or running, its row follows it (status,
// progress, units, errors) without a reload, from the portal's progress.json; once it has
// finished, its download links show and its Cancel button becomes "Delete data".
(function () {
  "use strict";
  var table = document.querySelector("table.bulk-jobs");
  if (!table) return;
  var url = table.getAttribute("data-progress-url");
  var LABELS = { queued: "Queued", running: "Running", succeeded: "Succeeded", canceled: "Canceled", failed: "Failed" };

  function moving() {
    return Array.prototype.filter.call(table.querySelectorAll("tr[data-job-id]"), function (row) {
      var status = row.getAttribute("data-status");
      return status === "queued" || status === "running";
    });
  }

  function show(row, job) {
    row.setAttribute("data-status", job.status);
    var status = row.querySelector(".job-status");
    status.textContent = LABELS[job.status] || job.status;
    status.className = "job-status status status-" + job.status;
    var bar = row.querySelector(".job-progress");
    bar.max = job.total;
    bar.value = job.processed;
    row.querySelector(".job-count").textContent = job.processed + " of " + job.total;
    row.querySelector(".job-charged").textContent = job.charged;
    row.querySelector(".job-errors").textContent = job.itemErrors;
    if (job.downloadable) row.querySelector(".job-downloads").hidden = false;
    var cancel = row.querySelector(".job-cancel");
    if (cancel && job.status !== "queued" && job.status !== "running") {
      cancel.firstChild.textContent = job.downloadable ? "Delete data" : "Cancel";
      if (!job.downloadable) cancel.closest("form").hidden = true;
    }
  }

  function poll() {
    var rows = moving();
    if (!rows.length) return;
    var ids = rows.map(function (row) { return row.getAttribute("data-job-id"); });
    fetch(url + "?ids=" + encodeURIComponent(ids.join(",")), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) { return response.ok ? response.json() : { jobs: [] }; })
      .then(function (body) {
        body.jobs.forEach(function (job) {
          var row = table.querySelector('tr[data-job-id="' + job.id + '"]');
          if (row) show(row, job);
        });
      })
      .catch(function () {})
      .then(function () { window.setTimeout(poll, 1500); });
  }

  window.setTimeout(poll, 1000);
})();
