"use strict";(self.rspackChunk_attention_course_check=self.rspackChunk_attention_course_check||[]).push([[0],{15(e,t,n){var r=n(16),c=n.n(r),a=n(17),o=(n.n(a))()(c());o.push([e.id,`/* The "Check with the course's graders" dialog: as wide as the window allows (up to 1000px),
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
`,""]),n.d(t,{},{A:o})},17(e){e.exports=function(e){var t=[];return t.toString=function(){return this.map(function(t){var n="",r=void 0!==t[5];return t[4]&&(n+="@supports (".concat(t[4],") {")),t[2]&&(n+="@media ".concat(t[2]," {")),r&&(n+="@layer".concat(t[5].length>0?" ".concat(t[5]):""," {")),n+=e(t),r&&(n+="}"),t[2]&&(n+="}"),t[4]&&(n+="}"),n}).join("")},t.i=function(e,n,r,c,a){"string"==typeof e&&(e=[[null,e,void 0]]);var o={};if(r)for(var i=0;i<this.length;i++){var s=this[i][0];null!=s&&(o[s]=!0)}for(var l=0;l<e.length;l++){var u=[].concat(e[l]);r&&o[u[0]]||(void 0!==a&&(void 0===u[5]||(u[1]="@layer".concat(u[5].length>0?" ".concat(u[5]):""," {").concat(u[1],"}")),u[5]=a),n&&(u[2]&&(u[1]="@media ".concat(u[2]," {").concat(u[1],"}")),u[2]=n),c&&(u[4]?(u[1]="@supports (".concat(u[4],") {").concat(u[1],"}"),u[4]=c):u[4]="".concat(c)),t.push(u))}},t}},16(e){e.exports=function(e){return e[1]}},8(e,t,n){n.r(t);var r=n(9),c=n.n(r),a=n(10),o=n.n(a),i=n(11),s=n.n(i),l=n(12),u=n.n(l),p=n(13),f=n.n(p),h=n(14),d=n.n(h),m=n(15),v={};v.styleTagTransform=d(),v.setAttributes=u(),v.insert=s().bind(null,"head"),v.domAPI=o(),v.insertStyleElement=f(),c()(m.A,v);let g=m.A&&m.A.locals?m.A.locals:void 0;n.d(t,{},{default:g})},9(e){var t=[];function n(e){for(var n=-1,r=0;r<t.length;r++)if(t[r].identifier===e){n=r;break}return n}function r(e,r){for(var c={},a=[],o=0;o<e.length;o++){var i=e[o],s=r.base?i[0]+r.base:i[0],l=c[s]||0,u="".concat(s," ").concat(l);c[s]=l+1;var p=n(u),f={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==p)t[p].references++,t[p].updater(f);else{var h=function(e,t){var n=t.domAPI(t);return n.update(e),function(t){t?(t.css!==e.css||t.media!==e.media||t.sourceMap!==e.sourceMap||t.supports!==e.supports||t.layer!==e.layer)&&n.update(e=t):n.remove()}}(f,r);r.byIndex=o,t.splice(o,0,{identifier:u,updater:h,references:1})}a.push(u)}return a}e.exports=function(e,c){var a=r(e=e||[],c=c||{});return function(e){e=e||[];for(var o=0;o<a.length;o++){var i=n(a[o]);t[i].references--}for(var s=r(e,c),l=0;l<a.length;l++){var u=n(a[l]);0===t[u].references&&(t[u].updater(),t.splice(u,1))}a=s}}},11(e){var t={};e.exports=function(e,n){var r=function(e){if(void 0===t[e]){var n=document.querySelector(e);if(window.HTMLIFrameElement&&n instanceof window.HTMLIFrameElement)try{n=n.contentDocument.head}catch(e){n=null}t[e]=n}return t[e]}(e);if(!r)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");r.appendChild(n)}},13(e){e.exports=function(e){var t=document.createElement("style");return e.setAttributes(t,e.attributes),e.insert(t,e.options),t}},12(e,t,n){e.exports=function(e){var t=n.nc;t&&e.setAttribute("nonce",t)}},10(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var t=e.insertStyleElement(e);return{update:function(n){var r,c,a;r="",n.supports&&(r+="@supports (".concat(n.supports,") {")),n.media&&(r+="@media ".concat(n.media," {")),(c=void 0!==n.layer)&&(r+="@layer".concat(n.layer.length>0?" ".concat(n.layer):""," {")),r+=n.css,c&&(r+="}"),n.media&&(r+="}"),n.supports&&(r+="}"),(a=n.sourceMap)&&"u">typeof btoa&&(r+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(a))))," */")),e.styleTagTransform(r,t,e.options)},remove:function(){var e;null===(e=t).parentNode||e.parentNode.removeChild(e)}}}},14(e){e.exports=function(e,t){if(t.styleSheet)t.styleSheet.cssText=e;else{for(;t.firstChild;)t.removeChild(t.firstChild);t.appendChild(document.createTextNode(e))}}}}]);