// jest's globalSetup: the run's folder of shared promtool and amtool results (prom-tools-results.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
module.exports = require('./prom-tools-results').setup;
