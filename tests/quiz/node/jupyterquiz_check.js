// Answer jupyterquiz questions with jupyterquiz's own JavaScript in a jsdom page.
// argv[2]: jupyterquiz's js folder. stdin: JSON list of {question, answer}, where answer is the
// text typed (numeric, string) or the list of answer indices clicked (multiple/many choice).
// stdout: JSON list of verdicts, true when jupyterquiz marks the answer correct.
const fs = require("fs");
const path = require("path");
const { JSDOM } = require(process.env.JSDOM);

const jsDir = process.argv[2];
const sources = ["helpers.js", "multiple_choice.js", "numeric.js", "string.js", "show_questions.js"]
  .map((name) => fs.readFileSync(path.join(jsDir, name), "utf8"))
  .join("\n;\n");

const harness = `
window.answerWithJupyterquiz = function (qa, answer, n) {
  const container = document.createElement("div");
  container.id = "quiz" + n;
  document.body.appendChild(container);
  show_questions([qa], container);
  const fb = container.querySelector(".Feedback");
  if (qa.type === "numeric" || qa.type === "string") {
    const input = container.querySelector("input.Input-text");
    input.value = answer;
    (qa.type === "numeric" ? check_numeric : check_string)(input, { keyCode: 13 });
    return input.classList.contains("correctButton");
  }
  const labels = Array.from(container.querySelectorAll("label.MCButton"));
  for (const index of answer) {
    window.event = { srcElement: labels[index] };  // check_mc reads the global event
    check_mc.call(labels[index]);
  }
  if (qa.type === "multiple_choice") {
    return fb.classList.contains("correct");
  }
  return Number(fb.dataset.answeredcorrect) === Number(fb.dataset.numcorrect);
};
`;

const dom = new JSDOM("<!DOCTYPE html><body></body>", { runScripts: "outside-only" });
dom.window.console.log = () => {};  // jupyterquiz logs every check
dom.window.eval(sources + "\n;\n" + harness);
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const verdicts = cases.map((c, n) => dom.window.answerWithJupyterquiz(c.question, c.answer, n));
process.stdout.write(JSON.stringify(verdicts));
