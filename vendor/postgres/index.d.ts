// The vendored, patched copy of postgres 3.4.9 (PATCHES.md) keeps the npm package's API: its
// types are the package's own.
export {default} from 'postgres'
