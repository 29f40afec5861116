// The mistake of the Node client: the module's export taken for the class. Node prints
// the source line, the TypeError, its stack, and "Node.js v20..." last.
const ZongJi = { default: function ZongJi() {} };
const zongji = new ZongJi({ host: process.env.FAKEMASTER_HOST });
zongji.start();
