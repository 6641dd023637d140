// Labels every kernel-free player: it shows frames drawn when the book was built,
// while the live widget (every control) needs a running kernel (Jupyter or Colab).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".taotp-player").forEach(function (player) {
    if (player.previousElementSibling &&
        player.previousElementSibling.classList.contains("taotp-player-note")) return;
    var note = document.createElement("p");
    note.className = "taotp-player-note";
    note.textContent = "Kernel-free player: frames drawn when the book was built. " +
      "To drag the live sliders, open this page in Jupyter or Colab " +
      "(rocket icon, top right).";
    player.parentNode.insertBefore(note, player);
  });
});
