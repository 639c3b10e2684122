// Module and chunk ids numbered in order rather than hashed from the build folder's path, so
// that the same sources build the same files wherever they are built (scripts/build_labextension.py).
module.exports = { optimization: { moduleIds: 'natural', chunkIds: 'natural' } };
