// jest's globalSetup: the run's shared folders (run-folders.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
module.exports = require('./run-folders').setup;
