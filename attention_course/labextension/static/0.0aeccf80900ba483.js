"use strict";(self.rspackChunk_attention_course_check=self.rspackChunk_attention_course_check||[]).push([[0],{15(e,t,a){var o=a(16),n=a.n(o),r=a(17),c=(a.n(r))()(n());c.push([e.id,`/* The "Check with the course's graders" dialog: as wide as the window allows (up to 1000px),
   every line wrapped at its width, never cut; hints indented under their FAIL line. */

.ac-check-dialog .jp-Dialog-content {
  width: min(1000px, calc(100vw - 32px));
  max-width: min(1000px, calc(100vw - 32px));
}

.ac-check {
  font-size: var(--jp-content-font-size1);
  line-height: 1.4;
}

.ac-check p {
  margin: 0 0 0.6em;
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}

.ac-check-feedback {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  margin: 0.4em 0 0.8em;
}

.ac-check-line {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}

.ac-check-total {
  font-weight: bold;
  margin-bottom: 0.4em;
}

.ac-check-function {
  font-weight: bold;
  margin-top: 0.8em;
}

.ac-check-tag {
  font-weight: bold;
}

.ac-check-pass .ac-check-tag {
  color: var(--jp-success-color1);
}

.ac-check-fail .ac-check-tag {
  color: var(--jp-error-color1);
}

.ac-check-note .ac-check-tag {
  color: var(--jp-warn-color1);
}

.ac-check-hint {
  margin: 0.1em 0 0.3em 3.2em;
  font-family: var(--jp-content-font-family);
}

.ac-check-by {
  color: var(--jp-ui-font-color2);
}

.ac-check-refused {
  font-weight: bold;
}

.ac-check-waited,
.ac-check-left,
.ac-check-uncounted {
  font-weight: bold;
}

.ac-check-item {
  margin-bottom: 0.6em;
}

.ac-check-summary {
  cursor: pointer;
  font-weight: bold;
  overflow-wrap: anywhere;
}

/* Validate's dialog (nbgrader's) and the Check dialog, readable zoomed in (400% of a laptop's
   window is about 320 x 225 CSS px): the dialog takes the whole window when it is small, so the
   message region keeps most of its height; the region scrolls and takes focus (src/index.js). */

.jp-Dialog-content:has(#validation-message) {
  width: min(1000px, calc(100vw - 32px));
  max-width: min(1000px, calc(100vw - 32px));
}

.ac-readable-dialog .jp-Dialog-body:focus-visible {
  outline: 2px solid var(--jp-brand-color1);
  outline-offset: -2px;
}

@media (max-height: 480px), (max-width: 480px) {
  .ac-readable-dialog .jp-Dialog-content {
    width: 100vw;
    max-width: 100vw;
    max-height: 100vh;
    height: 100vh;
    padding: 4px 6px;
    border-radius: 0;
  }

  .ac-readable-dialog .jp-Dialog-header {
    padding: 0 0 2px;
    font-size: var(--jp-ui-font-size1);
  }

  .ac-readable-dialog .jp-Dialog-body {
    flex: 1 1 auto;
    min-height: 0;
    padding: 0;
  }

  .ac-readable-dialog #validation-message pre {
    margin: 0.3em 0;
  }

  .ac-readable-dialog .jp-Dialog-footer {
    padding: 2px 0 0;
    margin: 0;
  }
}
`,""]),a.d(t,{},{A:c})},17(e){e.exports=function(e){var t=[];return t.toString=function(){return this.map(function(t){var a="",o=void 0!==t[5];return t[4]&&(a+="@supports (".concat(t[4],") {")),t[2]&&(a+="@media ".concat(t[2]," {")),o&&(a+="@layer".concat(t[5].length>0?" ".concat(t[5]):""," {")),a+=e(t),o&&(a+="}"),t[2]&&(a+="}"),t[4]&&(a+="}"),a}).join("")},t.i=function(e,a,o,n,r){"string"==typeof e&&(e=[[null,e,void 0]]);var c={};if(o)for(var i=0;i<this.length;i++){var s=this[i][0];null!=s&&(c[s]=!0)}for(var l=0;l<e.length;l++){var d=[].concat(e[l]);o&&c[d[0]]||(void 0!==r&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=r),a&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=a),n&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=n):d[4]="".concat(n)),t.push(d))}},t}},16(e){e.exports=function(e){return e[1]}},8(e,t,a){a.r(t);var o=a(9),n=a.n(o),r=a(10),c=a.n(r),i=a(11),s=a.n(i),l=a(12),d=a.n(l),p=a(13),h=a.n(p),u=a(14),f=a.n(u),m=a(15),g={};g.styleTagTransform=f(),g.setAttributes=d(),g.insert=s().bind(null,"head"),g.domAPI=c(),g.insertStyleElement=h(),n()(m.A,g);let v=m.A&&m.A.locals?m.A.locals:void 0;a.d(t,{},{default:v})},9(e){var t=[];function a(e){for(var a=-1,o=0;o<t.length;o++)if(t[o].identifier===e){a=o;break}return a}function o(e,o){for(var n={},r=[],c=0;c<e.length;c++){var i=e[c],s=o.base?i[0]+o.base:i[0],l=n[s]||0,d="".concat(s," ").concat(l);n[s]=l+1;var p=a(d),h={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==p)t[p].references++,t[p].updater(h);else{var u=function(e,t){var a=t.domAPI(t);return a.update(e),function(t){t?(t.css!==e.css||t.media!==e.media||t.sourceMap!==e.sourceMap||t.supports!==e.supports||t.layer!==e.layer)&&a.update(e=t):a.remove()}}(h,o);o.byIndex=c,t.splice(c,0,{identifier:d,updater:u,references:1})}r.push(d)}return r}e.exports=function(e,n){var r=o(e=e||[],n=n||{});return function(e){e=e||[];for(var c=0;c<r.length;c++){var i=a(r[c]);t[i].references--}for(var s=o(e,n),l=0;l<r.length;l++){var d=a(r[l]);0===t[d].references&&(t[d].updater(),t.splice(d,1))}r=s}}},11(e){var t={};e.exports=function(e,a){var o=function(e){if(void 0===t[e]){var a=document.querySelector(e);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(e){a=null}t[e]=a}return t[e]}(e);if(!o)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");o.appendChild(a)}},13(e){e.exports=function(e){var t=document.createElement("style");return e.setAttributes(t,e.attributes),e.insert(t,e.options),t}},12(e,t,a){e.exports=function(e){var t=a.nc;t&&e.setAttribute("nonce",t)}},10(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var t=e.insertStyleElement(e);return{update:function(a){var o,n,r;o="",a.supports&&(o+="@supports (".concat(a.supports,") {")),a.media&&(o+="@media ".concat(a.media," {")),(n=void 0!==a.layer)&&(o+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),o+=a.css,n&&(o+="}"),a.media&&(o+="}"),a.supports&&(o+="}"),(r=a.sourceMap)&&"u">typeof btoa&&(o+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(r))))," */")),e.styleTagTransform(o,t,e.options)},remove:function(){var e;null===(e=t).parentNode||e.parentNode.removeChild(e)}}}},14(e){e.exports=function(e,t){if(t.styleSheet)t.styleSheet.cssText=e;else{for(;t.firstChild;)t.removeChild(t.firstChild);t.appendChild(document.createTextNode(e))}}}}]);