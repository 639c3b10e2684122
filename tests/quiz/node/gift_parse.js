// Parse GIFT texts with gift-pegjs (the npm GIFT parser): stdin is a JSON list of texts,
// stdout a JSON list of the parsed question lists (or {"error": message}).
const { parse } = require(process.env.GIFT_PEGJS);

const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = texts.map((text) => {
  try {
    return parse(text);
  } catch (err) {
    return { error: String(err.message) };
  }
});
process.stdout.write(JSON.stringify(out));
