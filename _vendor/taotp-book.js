document.addEventListener("DOMContentLoaded", function () {
  // Every kernel-free player says what it is and where it steps.  Players stored since
  // taotp.plot wrote the note itself carry it already; older ones get it here.
  document.querySelectorAll(".taotp-player").forEach(function (player) {
    if (player.previousElementSibling &&
        player.previousElementSibling.classList.contains("taotp-player-note")) return;
    var note = document.createElement("p");
    note.className = "taotp-player-note";
    note.textContent = "Kernel-free player: frames drawn when the notebook was run; it " +
      "steps here, on Colab, and in Jupyter once the notebook is trusted or the cell " +
      "re-run. The live widget (every control) needs a running kernel: open this page " +
      "in Jupyter or Colab (rocket icon, top right).";
    player.parentNode.insertBefore(note, player);
  });
  // Tables printed by a cell: a column of prose (a cell of more than 24 characters) may
  // wrap, so a table with long text columns still fits the text column; numbers stay on
  // one line (see taotp-book.css).
  document.querySelectorAll(".bd-article .cell_output table").forEach(function (table) {
    var prose = {};
    Array.prototype.forEach.call(table.rows, function (row) {
      Array.prototype.forEach.call(row.cells, function (cell, i) {
        if (cell.textContent.trim().length > 24) prose[i] = true;
      });
    });
    Array.prototype.forEach.call(table.rows, function (row) {
      Array.prototype.forEach.call(row.cells, function (cell, i) {
        if (prose[i]) cell.classList.add("taotp-prose");
      });
    });
  });
});
