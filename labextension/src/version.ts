// The bundler inlines package.json: the version the kernel sees in `hello`.
declare function require(id: '../package.json'): { version: string };

export const EXTENSION_VERSION: string = require('../package.json').version;
