#!/usr/bin/env node
// The service's command: loads settings from the environment and listens (see README).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS launcher, not compiled
require('../build/service/main.js');
