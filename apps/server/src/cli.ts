/** The oxijobs command line (filled by the server slice). */
console.log('oxijobs: not implemented yet');
